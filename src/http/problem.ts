import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { WriteAccepted } from '../context';
import { isDomainError, type ErrorKind } from '../shared/errors';

const statusOfKind: Record<ErrorKind, number> = {
  Invalid: 400,
  NotFound: 404,
  Conflict: 409,
  PreconditionFailed: 412,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  Unavailable: 503,
};

/** RFC 9457 problem details, MindsDB's `{title, detail}` plus the status. */
export const sendProblem = (res: Response, status: number, title: string, detail: string) => {
  res.status(status).type('application/problem+json').send(JSON.stringify({ title, detail, status }));
};

type BodyParserError = Error & { type?: string; status?: number; limit?: number };

/** The one place where errors become HTTP answers. */
export const errorMapper =
  (logger: Logger): ErrorRequestHandler =>
  (error: unknown, req, res, _next) => {
    if (res.headersSent) return;
    // Not an error for the client: the write is stored, only this process's read model lags.
    if (error instanceof WriteAccepted) {
      res.setHeader('Location', `/api/events?after=${error.position - 1n}&limit=1`);
      return res.status(202).json(error.body);
    }
    if (isDomainError(error)) {
      if (error.retryAfterSeconds !== undefined)
        res.setHeader('Retry-After', String(error.retryAfterSeconds));
      return sendProblem(res, statusOfKind[error.kind], error.title, error.detail);
    }
    const e = error as BodyParserError;
    switch (e?.type) {
      case 'entity.parse.failed':
        return sendProblem(res, 400, 'Malformed JSON', `The request body is not valid JSON: ${e.message}`);
      case 'entity.too.large':
        return sendProblem(
          res,
          413,
          'Payload too large',
          `The request body exceeds the limit of ${e.limit ?? 'the configured'} bytes`,
        );
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return sendProblem(res, 415, 'Unsupported media type', e.message);
      case 'request.aborted':
        return sendProblem(res, 400, 'Request aborted', 'The client aborted the request body');
    }
    logger.error({ err: error, url: req.originalUrl, method: req.method }, 'unhandled error');
    return sendProblem(
      res,
      500,
      'Internal error',
      'The server hit a bug while handling this request; it has been logged.',
    );
  };
