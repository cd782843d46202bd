import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { withRequest } from '../shared/requestContext';
import { acceptedRequestId, MAX_REQUEST_ID_LENGTH, nextRequestId } from '../shared/requestIds';

/**
 * One JSON line per finished request, tagged with a request id (the client's X-Request-Id, or a new
 * one) that is echoed back. Only method, path, status and time are logged: bodies and query values
 * may carry secrets. This replaces pino-http, whose two child loggers per request cost about a
 * tenth of the throughput of a cached GET (bench/http.bench.ts).
 */
export const accessLog =
  (logger: Logger): RequestHandler =>
  (req, res, next) => {
    const sent = req.headers['x-request-id'] as string | undefined;
    // A client's id past 200 characters or with other than printable ASCII is not taken as sent
    // (logged, echoed, stored in every event appended): a new one is, as the answer's header says.
    const id = acceptedRequestId(sent) ?? nextRequestId();
    if (sent && sent !== id && logger.isLevelEnabled('debug'))
      logger.debug(
        { reqId: id, sentLength: sent.length, maxLength: MAX_REQUEST_ID_LENGTH },
        'X-Request-Id replaced: over 200 characters or not printable ASCII',
      );
    res.setHeader('X-Request-Id', id);
    // Code deep in the call chain (a log line about a refused connection) can name the request, and
    // record what it appended (the answer's X-Log-Position, logPosition.ts): one context per request.
    const proceed = () => withRequest({ requestId: id, interface: 'rest', appended: { last: null } }, next);
    if (!logger.isLevelEnabled('info')) return proceed();
    const started = process.hrtime.bigint();
    // 'close' fires for finished and for abandoned requests alike.
    res.once('close', () => {
      const finished = res.writableFinished;
      logger.info(
        {
          reqId: id,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          ...(finished ? {} : { aborted: true }),
        },
        finished ? 'request completed' : 'request aborted by client',
      );
    });
    proceed();
  };
