import { Gauge, type Registry } from 'prom-client';
import type { LogHead } from '../eventlog/headProbe';
import { positionAgainst } from '../projection/runner';

/** What the read-model gauges read at each scrape. */
type ReadModelProbe = {
  /** The log's head, at least `atLeast` (shared with the readiness check; it may time out). */
  head(atLeast: bigint): Promise<LogHead>;
  /** The read model's cursor: the last event it read. */
  cursor(): bigint;
  /**
   * The highest log position through which this process's read model includes every event the
   * log shows (past the cursor on PostgreSQL, after commits out of position order). It may fail.
   */
  appliedThrough(): Promise<bigint>;
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
   * is never below the read model's cursor.
   */
  const head = () => probe.head(probe.cursor()).catch(() => null);
  /** Where the read model stands (`positionAgainst`); its cursor when the log did not answer. */
  const position = (h: LogHead | null) =>
    h ? positionAgainst(h.position, probe.cursor(), probe.appliedThrough) : Promise.resolve(probe.cursor());

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
    help: "Highest global position through which this process's read model holds every committed event",
    registers: [registry],
    async collect() {
      this.set(Number(await position(await head())));
    },
  });
  new Gauge({
    name: 'mindledger_read_model_lag_events',
    help: "How far this process's read model is behind the log head, in log positions",
    registers: [registry],
    async collect() {
      const h = await head();
      if (h) this.set(Math.max(0, Number(h.position - (await position(h)))));
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
