import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * One registry per app, never prom-client's global one: tests build many apps in one process, and
 * each must count only its own requests (a global registry would also refuse the second app's
 * metrics, registered under the same names). Node's process metrics (CPU, memory, event-loop lag,
 * GC) come with it.
 */
export const metricsRegistry = (): Registry => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
};

/** What GET /api/metrics answers: the registry in Prometheus's text format, with its content type. */
export const exposition = async (registry: Registry) => ({
  contentType: registry.contentType,
  text: await registry.metrics(),
});
