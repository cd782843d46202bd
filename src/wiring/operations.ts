import type { RequestHandler } from 'express';
import type { AppContext } from '../context';
import { logAnswerWithin, logHeadProbe } from '../eventlog/headProbe';
import { commandMetrics } from '../metrics/commands';
import { httpRequestMetrics } from '../metrics/http';
import { readModelMetrics } from '../metrics/readModel';
import { exposition, metricsRegistry } from '../metrics/registry';
import { sqlMetrics } from '../metrics/sql';
import { workInFlightMetrics, type WorkInFlight } from '../metrics/work';
import { currentRequest } from '../shared/requestContext';
import type { SqlObserver } from '../sql/observer';
import type { OperationsPorts } from '../system/operations';
import { readinessOf } from '../system/readiness';

/** Probes and scrapes within this long share one answer of `head()` (a count over the whole log). */
const HEAD_MAX_AGE_MS = 500;
/** A log that takes longer to say where its head is makes the process not ready. */
const HEAD_TIMEOUT_MS = 2000;

/**
 * The operator's part of the composition root (src/app.ts): one metrics registry per app, fed by
 * the HTTP layer, the SQL service (through its observer port), the command runner, the projection
 * runner and the work in flight; and the readiness check, which reads the same log head.
 */
export const operatorView = (ctx: AppContext, work: WorkInFlight) => {
  const registry = metricsRegistry();
  const head = logHeadProbe(ctx.log, { maxAgeMs: HEAD_MAX_AGE_MS, timeoutMs: HEAD_TIMEOUT_MS });
  /** The read model's place past its cursor, asked of the log: bounded as the head is. */
  const appliedThrough = () => logAnswerWithin(ctx.projections.appliedThrough(), HEAD_TIMEOUT_MS);
  const requests: RequestHandler = httpRequestMetrics(registry);
  const sql: SqlObserver = sqlMetrics(registry);
  commandMetrics(registry, () => ctx.commands.stats());
  readModelMetrics(registry, {
    head,
    cursor: () => ctx.projections.position,
    appliedThrough,
    failed: () => ctx.projections.failure !== null,
  });
  workInFlightMetrics(registry, work);

  const routes: OperationsPorts = {
    readiness: async () => {
      const readiness = await readinessOf({
        head,
        position: () => ctx.projections.position,
        appliedThrough,
        failure: () => ctx.projections.failure,
        belongsToLog: () => ctx.projections.verifyBelongsToLog(),
        rebuildingForLog: () => (ctx.projections.rebuildingForTheLog ? ctx.projections.rebuildReason : null),
        maxLag: ctx.config.readyMaxLagEvents,
      });
      if (!readiness.ready && readiness.logError !== undefined)
        ctx.logger.warn(
          { reqId: currentRequest()?.requestId, err: readiness.logError },
          'not ready: the event log does not answer',
        );
      return readiness;
    },
    metrics: () => exposition(registry),
  };
  return { registry, requests, sql, routes };
};

export type OperatorView = ReturnType<typeof operatorView>;
