import type { SecretKeeper } from './ledger/secretKeeper';
import type { Logger } from 'pino';
import type { Config } from './config';
import type { Duck } from './duckdb/database';
import type { CommandRunner } from './eventlog/commands';
import type { EventLog } from './eventlog/types';
import {
  describeFailure,
  ProjectionBehind,
  ProjectionStalled,
  retryAfterSeconds,
  type ProjectionRunner,
} from './projection/runner';
import { unavailable } from './shared/errors';
import type { ReadCache } from './shared/readCache';
import type { Clock } from './shared/time';

/** What every capability's service is built from: injected, so tests can assemble their own. */
export type AppContext = {
  readonly config: Config;
  readonly secrets: SecretKeeper;
  readonly log: EventLog;
  readonly duck: Duck;
  readonly projections: ProjectionRunner;
  readonly commands: CommandRunner;
  readonly cached: ReadCache;
  /**
   * A read cache for values read from `table` alone: kept until a batch changes that table, not
   * dropped by every write elsewhere (a project's row outlives the creates of its skills).
   */
  readonly cachedOf: (table: string) => ReadCache;
  readonly clock: Clock;
  readonly logger: Logger;
};

/**
 * A write whose events are stored, but not yet in this process's read model when the wait ran
 * out: it happened, so the answer is 202 Accepted with the event's position, never a 500.
 */
export class WriteAccepted extends Error {
  constructor(
    readonly position: bigint,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'WriteAccepted';
  }

  get body() {
    return { position: this.position.toString(), status: 'accepted', detail: this.detail };
  }
}

/** Refuses a write before anything is appended while the read model is stopped (503, Retry-After). */
export const assertReadModelWritable = (projections: ProjectionRunner) => {
  const failure = projections.failure;
  if (failure)
    throw unavailable(
      `Nothing was written: the read model is stopped, ${describeFailure(failure)}. It is retried automatically.`,
      retryAfterSeconds(failure),
      'Read model stopped',
    );
};

/**
 * Waits until this process's read model includes a command's events (read-your-writes). When it
 * does not within PROJECTION_WAIT_MS, the write still happened: 202 with its position. When the read
 * model stopped at an event it cannot apply, 503 with the reason and when it is retried.
 * The request's answer carries the position either way: the command runner noted it
 * (X-Log-Position, src/http/logPosition.ts).
 */
export const settled = async (ctx: AppContext, lastPosition: bigint | null) => {
  if (lastPosition === null) return;
  try {
    await ctx.projections.waitFor(lastPosition, ctx.config.projectionWaitMs);
  } catch (error) {
    if (error instanceof ProjectionBehind)
      throw new WriteAccepted(
        lastPosition,
        `Stored as event ${lastPosition}; the read model has not caught up yet (waited ${error.waitedMs} ms), so reads may not show it for a moment.`,
      );
    if (error instanceof ProjectionStalled)
      throw unavailable(
        `Stored as event ${lastPosition}, but the read model is stopped: ${describeFailure(error.failure)}. Reads will not show it until that clears; it is retried automatically.`,
        retryAfterSeconds(error.failure),
        'Read model stopped',
      );
    throw error;
  }
};
