import { SqlError, SqlErrorCode } from './errors';

/**
 * The time limit of one SQL request, from the moment it arrives: rewriting, name resolution,
 * external fetches, predictions and DuckDB's work all count against it, not only execution.
 */
export type Deadline = {
  /** The limit, as configured (for messages); longer once extended. */
  readonly ms: number;
  /**
   * Moves the limit to `ms` from the start, if that is later: a query that turns out to ask an
   * agent gets the agents' time limit (their model calls take seconds, not milliseconds).
   */
  extendTo(ms: number): void;
  /** Milliseconds left (0 once expired). */
  remaining(): number;
  expired(): boolean;
  /** Throws the time-limit error once expired: called between steps of the main-thread work. */
  check(): void;
  /**
   * Settles with `work`, noting meanwhile that the request waits on `what` (an external database,
   * by name): a time-limit error raised while it waits names it, so the caller hears which database
   * held the query even when the request's own timer fires before the database's (a loaded machine).
   * A wait that failed is remembered too: the database's own error, on its way to the caller, can
   * lose the race to the request's timer by a turn of a busy event loop (a CI run: 1,019 ms for a
   * 1,000 ms limit, the database's error due at 900), and the time-limit error then names it.
   */
  waitingOn<T>(what: string, work: Promise<T>): Promise<T>;
  error(): SqlError;
};

/**
 * One request's deadline. A class: every statement makes one (a cached `SELECT 1` too), and an
 * object of six closures per statement was a visible share of that statement's cost.
 */
class RequestDeadline implements Deadline {
  private readonly start: number;
  private limit: number;
  /** What the request waits on now, with how many waits each (made on the first wait only). */
  private waits: Map<string, number> | undefined;
  /** What the request waited on that failed (made on the first failure only). */
  private failed: Set<string> | undefined;

  constructor(
    ms: number,
    private readonly now: () => number,
  ) {
    this.start = now();
    this.limit = ms;
  }

  get ms() {
    return this.limit;
  }

  extendTo(longer: number) {
    this.limit = Math.max(this.limit, longer);
  }

  remaining() {
    return Math.max(0, this.start + this.limit - this.now());
  }

  expired() {
    return this.now() >= this.start + this.limit;
  }

  check() {
    if (this.expired()) throw this.error();
  }

  waitingOn<T>(what: string, work: Promise<T>): Promise<T> {
    const waits = (this.waits ??= new Map());
    waits.set(what, (waits.get(what) ?? 0) + 1);
    const done = () => {
      const left = (waits.get(what) ?? 1) - 1;
      if (left > 0) waits.set(what, left);
      else waits.delete(what);
    };
    return work.then(
      (value) => {
        done();
        return value;
      },
      (error: unknown) => {
        done();
        (this.failed ??= new Set()).add(what);
        throw error;
      },
    );
  }

  error() {
    const waiting = this.waits && this.waits.size > 0 ? [...this.waits.keys()] : [];
    const failed = [...(this.failed ?? [])].filter((what) => !waiting.includes(what));
    const names = (list: string[]) => list.map((w) => `'${w}'`).join(', ');
    return new SqlError(
      SqlErrorCode.Timeout,
      `The query ran longer than ${this.limit} ms and was interrupted` +
        (waiting.length > 0 ? ` while waiting for ${names(waiting)}` : '') +
        (failed.length > 0 ? `${waiting.length > 0 ? ',' : ''} after ${names(failed)} failed to answer` : ''),
    );
  }
}

export const deadlineIn = (ms: number, now: () => number = Date.now): Deadline =>
  new RequestDeadline(ms, now);

/** Calls `fire` once the deadline has passed, however often it is extended meanwhile; returns a canceller. */
export const onExpiry = (deadline: Deadline, fire: () => void) => {
  let timer: NodeJS.Timeout;
  const arm = () => {
    timer = setTimeout(() => (deadline.expired() ? fire() : arm()), Math.max(1, deadline.remaining()));
  };
  arm();
  return () => clearTimeout(timer);
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
    const cancel = onExpiry(deadline, () => reject(deadline.error()));
    work.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(error as Error);
      },
    );
  });
