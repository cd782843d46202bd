import { SqlError, SqlErrorCode } from './errors';

/**
 * The time limit of one SQL request, from the moment it arrives: rewriting, name resolution,
 * external fetches, predictions and DuckDB's work all count against it, not only execution.
 */
export type Deadline = {
  /** The limit, as configured (for messages). */
  readonly ms: number;
  /** Milliseconds left (0 once expired). */
  remaining(): number;
  expired(): boolean;
  /** Throws the time-limit error once expired: called between steps of the main-thread work. */
  check(): void;
  error(): SqlError;
};

export const deadlineIn = (ms: number, now: () => number = Date.now): Deadline => {
  const at = now() + ms;
  const error = () =>
    new SqlError(SqlErrorCode.Timeout, `The query ran longer than ${ms} ms and was interrupted`);
  return {
    ms,
    remaining: () => Math.max(0, at - now()),
    expired: () => now() >= at,
    check: () => {
      if (now() >= at) throw error();
    },
    error,
  };
};

/** Gives the event loop a turn (pings, other requests) during long main-thread work. */
export const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Settles with `work`, or rejects with the time-limit error when the deadline passes first. The
 * work goes on (its connection stays leased until DuckDB lets go of it); only the answer is not
 * kept waiting for it.
 */
export const withinDeadline = <T>(work: Promise<T>, deadline: Deadline): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(deadline.error()), deadline.remaining());
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error as Error);
      },
    );
  });
