import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * Node's process metrics (CPU, memory, event-loop lag, GC), collected once per process: prom-client
 * starts a GC observer and an event-loop monitor for them that can never be stopped, and each keeps
 * reachable the async context it was made in and the registry it feeds. Made per app, every app a
 * process ever built (a test run builds hundreds) stayed in memory through them. Made here, when the
 * module loads, they hold nothing of any app.
 */
const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry });

/**
 * One registry per app, never prom-client's global one: tests build many apps in one process, and
 * each must count only its own requests (a global registry would also refuse the second app's
 * metrics, registered under the same names).
 */
export const metricsRegistry = (): Registry => new Registry();

/**
 * What GET /api/metrics answers: the app's registry and the process's, in Prometheus's text
 * format, with its content type.
 */
export const exposition = async (registry: Registry) => {
  const both = Registry.merge([processRegistry, registry]);
  return { contentType: both.contentType, text: await both.metrics() };
};
