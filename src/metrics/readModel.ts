import { Gauge, type Registry } from 'prom-client';
import type { LogHead } from '../eventlog/headProbe';

/** What the read-model gauges read at each scrape. */
type ReadModelProbe = {
  /** The log's head, at least `atLeast` (shared with the readiness check; it may time out). */
  head(atLeast: bigint): Promise<LogHead>;
  /** The log position this process's read model includes. */
  position(): bigint;
  /** The read model is stopped at an event it cannot apply. */
  failed(): boolean;
};

/**
 * Where the log is, where this process's read model is, and how far behind, read when Prometheus
 * scrapes (nothing is kept up to date in between). Positions are global log positions: on
 * PostgreSQL a sequence that may skip numbers, so the lag in events is an upper bound.
 */
export const readModelMetrics = (registry: Registry, probe: ReadModelProbe) => {
  /**
   * The head, or null when the log failed or timed out (the probe shares one answer per scrape). It
   * is never below the read model's position: the lag is never negative.
   */
  const head = () => probe.head(probe.position()).catch(() => null);
  const position = () => Number(probe.position());

  new Gauge({
    name: 'mindledger_event_log_up',
    help: 'Whether the event log answered this scrape (1) or failed or timed out (0)',
    registers: [registry],
    async collect() {
      this.set((await head()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'mindledger_event_log_head_position',
    help: 'Global position of the last committed event in the log',
    registers: [registry],
    async collect() {
      const h = await head();
      if (h) this.set(Number(h.position));
    },
  });
  new Gauge({
    name: 'mindledger_read_model_position',
    help: "Global position of the last event in this process's read model",
    registers: [registry],
    collect() {
      this.set(position());
    },
  });
  new Gauge({
    name: 'mindledger_read_model_lag_events',
    help: "How far this process's read model is behind the log head, in log positions",
    registers: [registry],
    async collect() {
      const h = await head();
      if (h) this.set(Math.max(0, Number(h.position) - position()));
    },
  });
  new Gauge({
    name: 'mindledger_read_model_failed',
    help: "1 while this process's read model is stopped at an event it cannot apply (GET /api/status names it), else 0",
    registers: [registry],
    collect() {
      this.set(probe.failed() ? 1 : 0);
    },
  });
};
