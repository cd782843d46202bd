import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { isOutOfMemoryMessage } from '../duckdb/errors';
import { isDomainError, WriteAccepted, type ErrorKind } from '../shared/errors';
import { stripServerPaths } from './serverPaths';

const statusOfKind: Record<ErrorKind, number> = {
  Invalid: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PreconditionFailed: 412,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  TooManyRequests: 429,
  Unavailable: 503,
  BadGateway: 502,
  GatewayTimeout: 504,
};

/**
 * Longest detail a problem carries. Details may quote what the client sent (a path segment, a JSON
 * parser's view of the body); a client sending megabytes must not get megabytes echoed back.
 */
export const MAX_DETAIL_CHARS = 2000;

/** `text` cut to `max` characters, saying so; never splits a surrogate pair. */
export const truncate = (text: string, max: number) => {
  if (text.length <= max) return text;
  let end = max;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
};

/** RFC 9457 problem details, MindsDB's `{title, detail}` plus the status. */
export const sendProblem = (res: Response, status: number, title: string, detail: string) => {
  res.status(status).type('application/problem+json').send(JSON.stringify({ title, detail, status }));
};

/** What the client may read of an error detail: no server path, no unbounded echo of its input. */
const clientDetail = (detail: string) => truncate(stripServerPaths(detail), MAX_DETAIL_CHARS);

/** express/body-parser/raw-body errors: http-errors with a `type`, a `status` and sometimes a `body`. */
type HttpLibraryError = Error & {
  type?: string;
  status?: number;
  statusCode?: number;
  expose?: boolean;
  limit?: number;
  /** Set by zlib on its errors (and by system calls, which never surface here as a 4xx). */
  errno?: number;
  body?: unknown;
  maxJsonDepth?: number;
  maxBodyDepth?: number;
};

const titleOfStatus: Record<number, string> = {
  400: 'Bad request',
  408: 'Request timeout',
  411: 'Length required',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  431: 'Request header fields too large',
};

/** The first non-blank character of a body body-parser refused in strict mode (not `{` nor `[`). */
const firstCharacter = (body: unknown) => (typeof body === 'string' ? body.trimStart()[0] : undefined);

/**
 * The problem for an error raised by the HTTP libraries before any route ran (decoding the path,
 * inflating, reading and parsing the body), or null when the error is none of theirs. These are
 * all the client's doing: each gets a 4xx naming what is wrong, never a 500.
 */
const libraryProblem = (
  e: HttpLibraryError,
  contentEncoding: string | undefined,
): { status: number; title: string; detail: string } | null => {
  switch (e.type) {
    case 'entity.parse.failed': {
      const first = firstCharacter(e.body);
      // body-parser's strict mode words its refusal as a JSON syntax error; it is not one.
      if (first !== undefined && first !== '{' && first !== '[')
        return {
          status: 400,
          title: 'Malformed JSON',
          detail: 'The request body must be a JSON object or array',
        };
      return {
        status: 400,
        title: 'Malformed JSON',
        // V8 quotes at most a few characters of the input in its message.
        detail: `The request body is not valid JSON: ${truncate(e.message, 200)}`,
      };
    }
    case 'entity.too.deep':
      return {
        status: 400,
        title: 'Value out of bounds',
        detail: `A value in the request body is nested deeper than ${e.maxJsonDepth} levels (MAX_JSON_DEPTH); the body as a whole may nest ${e.maxBodyDepth}`,
      };
    case 'entity.too.large':
      return {
        status: 413,
        title: 'Payload too large',
        detail: `The request body exceeds the limit of ${e.limit ?? 'the configured'} bytes`,
      };
    case 'encoding.unsupported':
      return {
        status: 415,
        title: 'Unsupported media type',
        detail: `Unsupported Content-Encoding ${JSON.stringify(truncate(contentEncoding ?? '', 40))}: use gzip, deflate, br or none`,
      };
    case 'charset.unsupported':
      return { status: 415, title: 'Unsupported media type', detail: truncate(e.message, 200) };
    case 'request.aborted':
      return { status: 400, title: 'Request aborted', detail: 'The client aborted the request body' };
    case 'request.size.invalid':
      return {
        status: 400,
        title: 'Bad request',
        detail: 'The request body is not as long as its Content-Length says',
      };
  }
  // The router could not percent-decode a path segment (`/api/projects/%ff`): its message quotes it.
  if (e instanceof URIError) {
    const segment = /^Failed to decode param '(.*)'$/s.exec(e.message)?.[1];
    return {
      status: 400,
      title: 'Malformed path',
      detail:
        segment === undefined
          ? 'The path holds an invalid percent-encoding'
          : `The path segment ${JSON.stringify(truncate(segment, 100))} is not valid percent-encoded UTF-8`,
    };
  }
  const status = e.status ?? e.statusCode;
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  // An inflate failure (gzip header then garbage, a truncated brotli stream) reaches us as zlib's
  // error wrapped in a 400: say which encoding did not decode rather than quote zlib.
  if (contentEncoding && contentEncoding !== 'identity' && typeof e.errno === 'number')
    return {
      status: 400,
      title: 'Malformed body',
      detail: `The request body is not valid ${JSON.stringify(truncate(contentEncoding, 40))} data (Content-Encoding)`,
    };
  return {
    status,
    title: titleOfStatus[status] ?? 'Bad request',
    detail: e.expose === false ? 'The request cannot be processed' : truncate(e.message, 200),
  };
};

/** The one place where errors become HTTP answers. */
export const errorMapper =
  (logger: Logger): ErrorRequestHandler =>
  (error: unknown, req, res, _next) => {
    if (res.headersSent) return;
    // Not an error for the client: the write is stored, only this process's read model lags.
    if (error instanceof WriteAccepted) {
      res.setHeader('Location', `/api/events?after=${error.position - 1n}&limit=1`);
      return res.status(202).json({ ...error.body, detail: clientDetail(error.body.detail) });
    }
    if (isDomainError(error)) {
      if (error.retryAfterSeconds !== undefined)
        res.setHeader('Retry-After', String(error.retryAfterSeconds));
      return sendProblem(res, statusOfKind[error.kind], error.title, clientDetail(error.detail));
    }
    if (error !== null && typeof error === 'object') {
      const encoding = req.headers['content-encoding']?.trim().toLowerCase();
      const problem = libraryProblem(error as HttpLibraryError, encoding);
      if (problem) return sendProblem(res, problem.status, problem.title, clientDetail(problem.detail));
    }
    // DuckDB out of its memory (DUCKDB_MEMORY_LIMIT) while a read ran: the server is busy (a heavy
    // query holds it), not broken; the same read answers once the memory is back.
    if (error instanceof Error && isOutOfMemoryMessage(error.message)) {
      logger.warn(
        { err: error, url: req.originalUrl, method: req.method },
        'read refused: DuckDB out of memory',
      );
      res.setHeader('Retry-After', '1');
      return sendProblem(
        res,
        503,
        'Server busy',
        "The server's query engine is out of memory (DUCKDB_MEMORY_LIMIT); try again shortly",
      );
    }
    logger.error({ err: error, url: req.originalUrl, method: req.method }, 'unhandled error');
    return sendProblem(
      res,
      500,
      'Internal error',
      'The server hit a bug while handling this request; it has been logged.',
    );
  };

/** The answer for a path no route takes; it names the path, cut short (a path may be 16 KiB). */
export const notFoundHandler: RequestHandler = (req, res) => {
  sendProblem(
    res,
    404,
    'Not found',
    `The endpoint you are trying to access does not exist on the server: ${req.method} ${truncate(req.path, 200)}`,
  );
};
