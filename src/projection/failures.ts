import type { RecordedEvent } from '../../events';
import { messageOf } from '../shared/errors';

/** Why this process's read model stopped moving: the event it cannot apply, and what went wrong. */
export type ProjectionFailure = {
  /** Global position of the event that failed; null when reading the log itself failed. */
  readonly position: bigint | null;
  readonly eventType: string | null;
  /** The table (or schema projection) whose `apply` failed; null when the log could not be read. */
  readonly projection: string | null;
  readonly error: string;
  /** ISO time of the first failure of this event. */
  readonly since: string;
  readonly attempts: number;
  /** When the next attempt is due (epoch ms). */
  readonly retryAt: number;
};

/** A projection threw on one event: which event, which projection. */
export class ProjectionApplyError extends Error {
  constructor(
    readonly event: RecordedEvent | null,
    readonly projection: string,
    readonly original: unknown,
  ) {
    super(messageOf(original));
    this.name = 'ProjectionApplyError';
  }
}

/** A writer waited for an event the runner cannot reach: it is stopped at an event it cannot apply. */
export class ProjectionStalled extends Error {
  constructor(
    readonly position: bigint,
    readonly failure: ProjectionFailure,
  ) {
    super(`Event ${position} is stored, but the read model is stopped: ${describeFailure(failure)}`);
    this.name = 'ProjectionStalled';
  }
}

/** A writer's event is stored but was not projected within the wait (the read model is slow). */
export class ProjectionBehind extends Error {
  constructor(
    readonly position: bigint,
    readonly waitedMs: number,
  ) {
    super(`Event ${position} is stored, but the read model has not caught up after ${waitedMs} ms`);
    this.name = 'ProjectionBehind';
  }
}

export const describeFailure = (f: ProjectionFailure) =>
  f.position === null
    ? `reading the log failed: ${f.error}`
    : `projection ${f.projection} cannot apply event ${f.position} (${f.eventType}): ${f.error}`;

/** Seconds until the next attempt, at least 1 (a `Retry-After`). */
export const retryAfterSeconds = (f: ProjectionFailure, now = Date.now()) =>
  Math.max(1, Math.ceil((f.retryAt - now) / 1000));

/**
 * The failure after `error`, counting attempts at the same event, and how long to wait before the
 * next one: doubling from 1 s up to `retryMaxMs` (a log that cannot be read, e.g. a database
 * restarting, is retried sooner: at most every 5 s).
 */
export const nextFailure = (previous: ProjectionFailure | null, error: unknown, retryMaxMs: number) => {
  const applyError = error instanceof ProjectionApplyError ? error : null;
  const event = applyError?.event ?? null;
  const position = event?.meta.position ?? null;
  const same = previous !== null && previous.position === position;
  const attempts = same ? previous.attempts + 1 : 1;
  const maxMs = Math.min(retryMaxMs, applyError ? Infinity : 5_000);
  const delay = Math.min(maxMs, 1000 * 2 ** Math.min(attempts - 1, 20));
  const message = applyError ? applyError.message : messageOf(error);
  const failure: ProjectionFailure = {
    position,
    eventType: event?.type ?? null,
    projection: applyError?.projection ?? null,
    error: message.length > 2000 ? `${message.slice(0, 2000)}…` : message,
    since: same ? previous.since : new Date().toISOString(),
    attempts,
    retryAt: Date.now() + delay,
  };
  return { failure, delay, applyError };
};
