import type { MindledgerEvent, RecordedEvent } from '../../events';
import type { RequestContext } from '../shared/requestContext';

/** An event about to be appended (a member of the contract's union): the log adds position, ids and time. */
export type NewEvent = MindledgerEvent;

/**
 * Where a reader of the whole log stands. On PostgreSQL, positions come from a sequence and can
 * commit out of order, so the reader also tracks the transaction id (see readAll in postgres.ts).
 */
export type LogCursor = { readonly position: bigint; readonly transactionId: string | null };
export const logStart: LogCursor = { position: 0n, transactionId: null };

/**
 * What a follower of the log hears: a process committed events (PostgreSQL names the transaction,
 * so a follower that already read past it need not look), the news feed is listening (at first, or
 * again after an outage: anything committed before was not announced), or it was lost (polling
 * alone until it is back).
 */
export type LogNews =
  | { readonly kind: 'committed'; readonly transactionId: string }
  | { readonly kind: 'listening' }
  | { readonly kind: 'lost'; readonly error: string };

/** True when a reader standing at `cursor` has read every event of the transaction `transactionId`. */
export const cursorPassed = (cursor: LogCursor, transactionId: string) =>
  cursor.transactionId !== null && BigInt(cursor.transactionId) >= BigInt(transactionId);

export type AppendResult = {
  /** Global position of the last appended event. */
  readonly lastPosition: bigint;
  /** Stream version after the append (number of events in the stream). */
  readonly streamVersion: bigint;
  /** The appended events as they now stand in the log (positions, ids, time). */
  readonly events: readonly RecordedEvent[];
};

export class StreamVersionConflict extends Error {
  constructor(stream: string, expected: bigint) {
    super(`Stream ${stream} moved on since version ${expected}`);
    this.name = 'StreamVersionConflict';
  }
}

/**
 * A stream the log records at another version than its events reach: events were removed from its
 * end (or its row edited) outside the service, after they were written. Every append expecting the
 * version its events give is refused as a conflict, and reading it again gives the same version: no
 * retry can resolve it, so the command fails at once (src/eventlog/commands.ts).
 */
export class StreamTampered extends Error {
  constructor(
    readonly stream: string,
    readonly version: bigint,
  ) {
    super(
      `Stream ${stream} refuses appends at version ${version}, where its events end, however often it is read again: the log records it at another version, so events were removed from it (or its row edited) after they were written`,
    );
    this.name = 'StreamTampered';
  }
}

/**
 * The log refused what was given to it (a value its store cannot hold: PostgreSQL's data exceptions,
 * SQLSTATE class 22), as opposed to failing (a connection lost): the events' fault, so the command
 * that decided them fails with a 400 and the commands appended beside it are retried without it.
 */
export class AppendRefused extends Error {
  constructor(readonly reason: string) {
    super(`The log cannot store these events: ${reason}`);
    this.name = 'AppendRefused';
  }
}

/**
 * The only source of truth. Both stores implement exactly this; nothing else in the app
 * touches Emmett or the database behind it.
 */
export interface EventLog {
  readonly kind: 'sqlite' | 'postgres';
  /**
   * True when this process is the log's only writer (embedded SQLite): what it appended is all there
   * is, so cached stream states need no re-read before a command.
   */
  readonly soleWriter: boolean;
  /** Events of one stream after `afterVersion`, upcast to the current contract. */
  readStream(stream: string, afterVersion: bigint): Promise<{ events: RecordedEvent[]; version: bigint }>;
  /**
   * Appends atomically iff the stream is still at `expectedVersion` (0n: the stream must not exist);
   * otherwise throws StreamVersionConflict and writes nothing. Each event's actor is the request
   * being served, unless `causes` names the request behind each event (one entry per event).
   */
  append(
    stream: string,
    events: readonly NewEvent[],
    expectedVersion: bigint,
    causes?: readonly (RequestContext | undefined)[],
  ): Promise<AppendResult>;
  /** The next committed events after the cursor, in an order that never skips one. */
  readAll(after: LogCursor, limit: number): Promise<{ events: RecordedEvent[]; cursor: LogCursor }>;
  /** How many events the log holds and the highest committed position (progress of a replay). */
  head(): Promise<{ events: number; position: bigint }>;
  /**
   * The committed event at exactly `position`, or null when the log holds none there. Not held back
   * by the readers' horizon (readAll, readPage): a row this reads is committed, and a position known
   * (a receipt) names one event whatever commits around it. A receipt's proof reads the event it names.
   */
  eventAt(position: bigint): Promise<RecordedEvent | null>;
  /**
   * The id of `eventAt(position)`, read alone: a read model checks with it, on every readiness
   * probe, that the log still holds the last event it applied (a restored older log, or another log
   * altogether, does not). The whole event, up to MAX_EVENT_BYTES, took 6-7 ms a probe for a 1 MB
   * event, and on SQLite held the log's one queue, appends included, meanwhile.
   */
  eventIdAt(position: bigint): Promise<string | null>;
  /** A page of the log in global-position order, for audits (optionally one stream). */
  readPage(options: { after: bigint; limit: number; stream?: string }): Promise<RecordedEvent[]>;
  /**
   * Runs `work` so that no other exclusive work on the same stream runs in this process meanwhile:
   * commands on one stream then never conflict with each other inside one process.
   */
  exclusive<T>(stream: string, work: () => Promise<T>): Promise<T>;
  /**
   * Tells `listener` as soon as another process commits events (PostgreSQL: LISTEN/NOTIFY on one
   * dedicated connection, reconnected with back-off). News can be lost, so followers keep polling;
   * SQLite has no other process to hear from and never calls. Answers a function that stops listening.
   */
  follow(listener: (news: LogNews) => void): () => Promise<void>;
  /**
   * The lowest position a reader standing at `cursor` may still read: every position below it is
   * at or before the cursor, or was never committed (and never will be). A reader restarted at a
   * checkpoint knows from it which older positions its tables already include.
   */
  unreadFloor(cursor: LogCursor): Promise<bigint>;
  close(): Promise<void>;
}
