import type { SecretKeeper } from './ledger/secretKeeper';
import type { Logger } from 'pino';
import type { RecordedEvent } from '../events';
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
import type { OwnWritesGate } from './projection/ownWrites';
import { unavailable, WriteAccepted } from './shared/errors';
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
  /**
   * Waits for this process's writes answered ahead (`answeredAhead`) that change `tables`; undefined
   * when there are none. Reads through `duck`, `cached` and `cachedOf` wait already; a reader of
   * anything else kept current by the read model (the SQL engine's answer cache) asks it first.
   */
  readonly ownWrites: OwnWritesGate;
  readonly clock: Clock;
  readonly logger: Logger;
};

/** How long a client is told to wait while the read model is rebuilt in place. */
const REBUILD_RETRY_AFTER_SECONDS = 2;

/**
 * The gate reads pass before they read the read model. While the tables are rebuilt in place
 * (they did not belong to the log), 503: the tables are dropped and filling, and a read would fail
 * on a missing table or answer from half of the log (a project "not found", a job acting on it).
 * Otherwise it waits (at most `waitMs`) for the writes this process answered ahead; past that, 503
 * naming the event and the position reached.
 */
export const ownWritesGate =
  (projections: ProjectionRunner, waitMs: number): OwnWritesGate =>
  (tables) => {
    if (projections.rebuildingForTheLog)
      return Promise.reject(
        unavailable(
          `The read model is being rebuilt from the log (${projections.rebuildReason ?? 'it did not belong to the log'}); it has reached position ${projections.highestApplied}. Nothing was read or written. Retry shortly.`,
          REBUILD_RETRY_AFTER_SECONDS,
          'Read model rebuilding',
        ),
      );
    return projections.ownWritesApplied(tables, waitMs)?.catch((error: unknown) => {
      if (error instanceof ProjectionBehind)
        throw unavailable(
          `This process answered a write (event ${error.position}) that its read model has not applied within ${waitMs} ms (READ_MIN_POSITION_WAIT_MS); it has reached position ${projections.highestApplied}. Retry shortly.`,
          1,
          'Read model behind',
        );
      throw error;
    });
  };

/**
 * For a write whose answer needs nothing from the read model (it is made from the command's own
 * state): it answers as soon as the log has its events, and this process's later reads of what they
 * change wait for them instead (`ownWrites`). Read-your-writes holds as with `settled`, and the
 * writer does not wait for the read model's commit; nor can it get 202: a read model that is behind
 * makes the next read wait, and past READ_MIN_POSITION_WAIT_MS answer 503.
 */
export const answeredAhead = (ctx: AppContext, events: readonly RecordedEvent[]) =>
  ctx.projections.answeredAhead(events);

/**
 * Refuses a write before anything is appended while the read model is stopped at an event it
 * cannot apply (503, Retry-After). A read model stopped by its disk (full, failing) does not refuse:
 * the log is the source of truth and takes the write; the read model catches up once the disk
 * does (`settled` answers 202, saying so).
 */
export const assertReadModelWritable = (projections: ProjectionRunner) => {
  const failure = projections.failure;
  if (failure && !failure.storage)
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
    if (error instanceof ProjectionStalled && error.failure.storage)
      throw new WriteAccepted(
        lastPosition,
        `Stored as event ${lastPosition}; the read model is behind: ${describeFailure(error.failure)}. Reads will show it once the disk takes the read model's writes again.`,
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
