import type { Request, RequestHandler } from 'express';
import { Histogram, type Registry } from 'prom-client';

/**
 * A request no route took: 404s, files served by static middleware (the console's assets, /doc),
 * and requests the guard refused before routing.
 */
const UNMATCHED = 'unmatched';

/**
 * The route's pattern as declared (`/api/projects/:project/skills/:skill`; a route declared with
 * several paths, all of them), never the path itself: a label per project or file name would grow
 * without bound.
 */
const routeOf = (req: Request) => {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return `${req.baseUrl}${path}`;
  if (Array.isArray(path) && path.every((p) => typeof p === 'string'))
    return path.map((p) => `${req.baseUrl}${p}`).join(',');
  return UNMATCHED;
};

/** `2xx`…`5xx`, or `aborted` when the client went away before the answer was finished. */
const statusClassOf = (status: number, finished: boolean) =>
  finished ? `${Math.floor(status / 100)}xx` : 'aborted';

/**
 * The latency of every HTTP request by route pattern, method and status class, measured like the
 * access log (from the first middleware to the response's close), beside which it is mounted.
 */
export const httpRequestMetrics = (registry: Registry): RequestHandler => {
  const duration = new Histogram({
    name: 'mindledger_http_request_duration_seconds',
    help: 'HTTP requests: time from arrival to the end of the answer, by route pattern, method and status class',
    labelNames: ['route', 'method', 'status_class'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    // 'close' fires for finished and abandoned requests alike.
    res.once('close', () => {
      duration.observe(
        {
          route: routeOf(req),
          method: req.method,
          status_class: statusClassOf(res.statusCode, res.writableFinished),
        },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
    next();
  };
};
