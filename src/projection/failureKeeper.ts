import type { Logger } from 'pino';
import type { PositionWaiters } from './appliedPositions';
import {
  describeFailure,
  isStorageErrorMessage,
  nextFailure,
  ProjectionStalled,
  type ProjectionFailure,
} from './failures';
import { messageOf } from '../shared/errors';

/**
 * What the runner does about an event it cannot apply: after a failed batch, its events are applied
 * one at a time, so the tables include everything before the one at fault and the failure names it;
 * the failure is recorded (GET /api/status), writers waiting are told, and the event is tried again
 * with back-off. An event a projection cannot apply for good is passed over by the operator's word
 * (PROJECTION_SKIP: `<position>:<projection>` pairs, `skipped`).
 */
export class FailureKeeper {
  private failed: ProjectionFailure | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  /** After a failed batch, this many events are applied one at a time, to find the one that fails. */
  private isolating = 0;
  /** `<position>:<projection>` pairs passed over (PROJECTION_SKIP). */
  readonly skipped: ReadonlySet<string>;

  constructor(
    private readonly deps: {
      logger: Logger;
      skip: readonly string[] | undefined;
      retryMaxMs: number;
      /** Writers waiting for positions: told at once when an event fails. */
      waiters: Pick<PositionWaiters, 'rejectAll'>;
      /** Tells the database's invalidation watch of the error. */
      noticeFailure: (error: unknown) => void;
      stopped: () => boolean;
      /** Tries again (the retry timer's work). */
      retry: () => Promise<void>;
    },
  ) {
    this.skipped = new Set(deps.skip ?? []);
  }

  /** See `ProjectionRunner.failure`. */
  get failure(): ProjectionFailure | null {
    return this.failed;
  }

  /** While an event fails and its next attempt is not due, why a catch-up is refused; null otherwise. */
  refusal(): Error | null {
    const failed = this.failed;
    if (failed && Date.now() < failed.retryAt)
      return new Error(`The read model is stopped: ${describeFailure(failed)}`);
    return null;
  }

  /** Why a writer cannot wait for `position` now (the runner is stopped at a failing event), if it cannot. */
  stalled(position: bigint): ProjectionStalled | null {
    return this.failed ? new ProjectionStalled(position, this.failed) : null;
  }

  /** How many events the next batch reads: one at a time while looking for the one at fault. */
  batchLimit(batchSize: number): number {
    return this.isolating > 0 ? 1 : batchSize;
  }

  /** Whether batches are applied one event at a time, to find the one at fault. */
  get isolatingOne(): boolean {
    return this.isolating > 0;
  }

  /**
   * A batch of `size` events failed with `error`: true when its events are to be applied one at a
   * time (the failure is then met again on the one at fault), false when the error stands.
   */
  isolateAfter(error: unknown, size: number): boolean {
    // A disk that cannot take the batch: no event is at fault, and one at a time would only fail
    // as many times. The cursor stays at the last committed checkpoint.
    if (isStorageErrorMessage(messageOf(error))) {
      this.isolating = 0;
      return false;
    }
    // One event of the batch failed (or its rows): apply them one by one, so the tables include
    // everything before the failing event and the failure names it.
    if (size > 1) {
      this.isolating = size;
      return true;
    }
    return false;
  }

  /** A batch was applied. */
  batchApplied() {
    if (this.isolating > 0) this.isolating--;
    this.recovered();
  }

  /** The read model follows the log again: nothing is failing. */
  recovered() {
    if (!this.failed) return;
    this.deps.logger.warn({ failure: failureForLog(this.failed) }, 'projection recovered');
    this.failed = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /**
   * The log answers again: a read of it that failed (not an event, not the disk) is retried now
   * rather than when its back-off comes round (writes are refused until it is).
   */
  logAnswersAgain() {
    if (this.failed && this.failed.position === null && !this.failed.storage)
      this.failed = { ...this.failed, retryAt: 0 };
  }

  /** An explicit rebuild tries again at once, whole batches again. */
  retryNow() {
    if (this.failed) this.failed = { ...this.failed, retryAt: 0 };
    this.isolating = 0;
  }

  /** The runner stops: no more retries. */
  cancelRetry() {
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  /** Remembers why, wakes every writer waiting (they cannot be served now), schedules a retry. */
  record(error: unknown) {
    const { failure, delay, applyError, firstOfEpisode } = nextFailure(
      this.failed,
      error,
      this.deps.retryMaxMs,
    );
    this.failed = failure;
    this.deps.noticeFailure(applyError?.original ?? error);
    // Once per episode (a full disk fails every attempt until space is freed: one line, not one a
    // second); each later attempt at debug level, and `projection recovered` when it clears.
    this.deps.logger[firstOfEpisode ? 'error' : 'debug'](
      { err: applyError?.original ?? error, failure: failureForLog(failure) },
      failure.storage
        ? 'projection failed: the disk holding the read model cannot take the batch; retrying every few seconds'
        : 'projection failed: retrying with back-off',
    );
    this.deps.waiters.rejectAll((position) => new ProjectionStalled(position, failure));
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (!this.deps.stopped()) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        // This timer is the retry: a timer may fire a few ms before Date.now() reaches retryAt
        // (libuv measures from the loop's cached time, stale under load), and a catch-up would then
        // be refused with nothing left to try again until the next poll or news.
        if (this.failed === failure) this.failed = { ...failure, retryAt: 0 };
        void this.deps.retry().catch(() => undefined);
      }, delay);
      this.retryTimer.unref();
    }
  }
}

const failureForLog = (f: ProjectionFailure) => ({
  ...f,
  position: f.position?.toString() ?? null,
  retryAt: new Date(f.retryAt).toISOString(),
});
