import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * SQL statements by kind and outcome, errors by code, and cache look-ups; the SQL service reports
 * them through the observer port it declares (src/sql/observer.ts), which the composition root
 * fills with these functions.
 */
export const sqlMetrics = (registry: Registry) => {
  const duration = new Histogram({
    name: 'mindledger_sql_statement_duration_seconds',
    help: 'SQL statements (HTTP and MySQL): time to the answer (a streamed SELECT: to its first rows), by statement kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'mindledger_sql_errors_total',
    help: 'SQL statements answered with an error, by statement kind and MySQL error code',
    labelNames: ['kind', 'code'] as const,
    registers: [registry],
  });
  const hits = new Counter({
    name: 'mindledger_sql_cache_hits_total',
    help: 'SQL cache look-ups that found what they looked for, by cache',
    labelNames: ['cache'] as const,
    registers: [registry],
  });
  const misses = new Counter({
    name: 'mindledger_sql_cache_misses_total',
    help: 'SQL cache look-ups that found nothing, by cache',
    labelNames: ['cache'] as const,
    registers: [registry],
  });
  return {
    answered: (answer: { kind: string; outcome: string; seconds: number; errorCode?: number }) => {
      duration.observe({ kind: answer.kind, outcome: answer.outcome }, answer.seconds);
      if (answer.errorCode !== undefined) errors.inc({ kind: answer.kind, code: String(answer.errorCode) });
    },
    cacheLookup: (cache: string, hit: boolean) => (hit ? hits : misses).inc({ cache }),
  };
};
