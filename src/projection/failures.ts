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
  /** The disk failed, not the event (`isStorageErrorMessage`): retried every few seconds at most. */
  readonly storage?: boolean;
};

/** Longest pause between two attempts when the disk, or the log, failed rather than an event. */
const TRANSIENT_RETRY_MAX_MS = 5_000;

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

/**
 * Whether an error is the disk's, not the event's: no space left (ENOSPC, SQLite's "database or disk
 * is full", DuckDB's "Could not write file …: No space left on device"), a quota, or an I/O error.
 * Nothing is wrong with the batch: it is written again, from the last committed checkpoint, once
 * the disk takes it, and soon (the pause stays short, see `nextFailure`).
 */
export const isStorageErrorMessage = (message: string) =>
  /No space left|ENOSPC|disk is full|SQLITE_FULL|Disk quota exceeded|EDQUOT|Could not write file|Could not (truncate|sync|fsync)|Input\/output error|\bEIO\b/i.test(
    message,
  );

/** Whether the disk is full (rather than failing): what the operator is told to free. */
const isNoSpaceMessage = (message: string) =>
  /No space left|ENOSPC|disk is full|SQLITE_FULL|Disk quota exceeded|EDQUOT/i.test(message);

/** In an operator's words: what the disk holding the data directory lacks. */
const describeStorageError = (message: string) =>
  isNoSpaceMessage(message)
    ? `no space left on the device holding DATA_DIR (the read model's DuckDB file): ${message}`
    : `the device holding DATA_DIR (the read model's DuckDB file) failed to write: ${message}`;

/** A failure in words, as the middle of a sentence (the error's own closing full stop left out). */
export const describeFailure = (f: ProjectionFailure) => describedFailure(f).replace(/\.+$/, '');

const describedFailure = (f: ProjectionFailure) =>
  f.storage
    ? `${describeStorageError(f.error)}; the batch is written again from the last checkpoint once the disk takes it`
    : f.position === null
      ? `reading the log failed: ${f.error}`
      : `projection ${f.projection} cannot apply event ${f.position} (${f.eventType}): ${f.error}`;

/** Seconds until the next attempt, at least 1 (a `Retry-After`). */
export const retryAfterSeconds = (f: ProjectionFailure, now = Date.now()) =>
  Math.max(1, Math.ceil((f.retryAt - now) / 1000));

/**
 * The failure after `error`, counting attempts at the same event, and how long to wait before the
 * next one: doubling from 1 s up to `retryMaxMs`. A log that cannot be read (a database restarting)
 * or a disk that cannot be written (full: space freed should let writes resume within seconds, not
 * after a pause grown to a minute) is retried sooner: at most every TRANSIENT_RETRY_MAX_MS.
 * `firstOfEpisode`: the read model was following the log until now, or failed otherwise before
 * (what the operator's log says once, not at every attempt).
 */
export const nextFailure = (previous: ProjectionFailure | null, error: unknown, retryMaxMs: number) => {
  const applyError = error instanceof ProjectionApplyError ? error : null;
  const message = applyError ? applyError.message : messageOf(error);
  const storage = isStorageErrorMessage(message);
  // A full disk fails whichever event comes first: the episode is the disk's, not one event's.
  const event = storage ? null : (applyError?.event ?? null);
  const position = event?.meta.position ?? null;
  const same = previous !== null && previous.position === position && Boolean(previous.storage) === storage;
  const attempts = same ? previous.attempts + 1 : 1;
  const maxMs = Math.min(retryMaxMs, applyError && !storage ? Infinity : TRANSIENT_RETRY_MAX_MS);
  const delay = Math.min(maxMs, 1000 * 2 ** Math.min(attempts - 1, 20));
  const failure: ProjectionFailure = {
    position,
    eventType: event?.type ?? null,
    projection: applyError?.projection ?? null,
    error: message.length > 2000 ? `${message.slice(0, 2000)}…` : message,
    since: same ? previous.since : new Date().toISOString(),
    attempts,
    retryAt: Date.now() + delay,
    ...(storage ? { storage } : {}),
  };
  return { failure, delay, applyError, firstOfEpisode: !same };
};
