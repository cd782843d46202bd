import type { Logger } from 'pino';
import type { RecordedEvent } from '../../events';
import type { Duck } from '../duckdb/database';
import type { EventLog, LogCursor } from '../eventlog/types';
import { BatchWriter } from './batchWriter';
import { watchCatchUp } from './catchUpProgress';
import { FailureKeeper } from './failureKeeper';
import { ProjectionStalled, type ProjectionFailure } from './failures';
import { LogPlace } from './logPlace';
import { OwnWrites, type TablesRead } from './ownWrites';
import { ReadModelTables } from './readModelTables';
import type { BatchRowStore } from './rows';
import type { ProjectionRunnerOptions } from './runnerOptions';
import { TableStamps } from './tableStamps';
import { LogTail } from './tail';
import type { SchemaProjection, TableProjection } from './types';

/**
 * Unless set otherwise (PROJECTION_PROGRESS_FROM_EVENTS, PROJECTION_PROGRESS_EVERY_MS): a start this
 * many events behind logs its progress, every few seconds, until it has caught up.
 */
const CATCH_UP_LOGGED_FROM = 10_000;
const CATCH_UP_LOG_EVERY_MS = 5_000;
/** How many events past the cursor `appliedThrough` looks at. */
const APPLIED_THROUGH_PAGE = 256;

export { CHECKPOINT_TABLE } from './checkpoint';
export {
  describeFailure,
  ProjectionBehind,
  ProjectionStalled,
  retryAfterSeconds,
  type ProjectionFailure,
} from './failures';
/**
 * Where a read model whose cursor is `cursor` stands against the log's head `head`: the cursor,
 * unless the head stands past it, when `appliedThrough` (`ProjectionRunner.appliedThrough`, bounded
 * by the caller) says how far every event is applied; the cursor again when that fails. Readiness
 * and the read-model gauges report it.
 */
export const positionAgainst = async (
  head: bigint,
  cursor: bigint,
  appliedThrough: () => Promise<bigint>,
): Promise<bigint> => (head > cursor ? await appliedThrough().catch(() => cursor) : cursor);

/**
 * Tails the log in order and applies it to the DuckDB tables, one transaction per batch with the
 * checkpoint in the same transaction: a crash never skips or double-applies an event. A change to
 * any table definition changes the fingerprint, and the tables are then rebuilt from the log.
 *
 * Its parts: where it stands in the log (`LogPlace`), the loop that follows the log (`LogTail`),
 * the batch writer (`BatchWriter`, with its `MemoryKeeper`), the versions and stamps batches move
 * (`TableStamps`), what it does about a failing event (`FailureKeeper`) and the tables as a whole
 * (`ReadModelTables`: fingerprint, rebuild). This class joins them and is what the rest knows.
 */
export class ProjectionRunner {
  private readonly place = new LogPlace();
  private readonly stamps: TableStamps;
  private readonly failures: FailureKeeper;
  private readonly writer: BatchWriter;
  private readonly tail: LogTail;
  private readonly tables: ReadModelTables;
  private readonly listeners: ((events: readonly RecordedEvent[]) => void)[] = [];
  /** Writes this process answered before they were applied (see `answeredAhead`). */
  private readonly ownWrites = new OwnWrites();

  constructor(
    duck: Duck,
    private readonly log: EventLog,
    projections: readonly TableProjection[],
    private readonly logger: Logger,
    private readonly options: ProjectionRunnerOptions = {},
    schemaProjections: readonly SchemaProjection[] = [],
  ) {
    const place = this.place;
    const stopped = () => this.tail.stopped;
    this.stamps = new TableStamps(projections, schemaProjections);
    this.failures = new FailureKeeper({
      logger,
      skip: options.skip,
      retryMaxMs: options.retryMaxMs ?? 60_000,
      waiters: place.waiters,
      noticeFailure: (error) => duck.noticeFailure(error),
      stopped,
      retry: () => this.catchUp(),
    });
    const { skipped } = this.failures;
    // What the batch writer and the tables both work from.
    const shared = { duck, log, logger, projections, schemaProjections, skipped, place };
    this.writer = new BatchWriter({
      ...shared,
      stopped,
      committed: (events, cursor, written) => this.recordApplied(events, cursor, written),
    });
    this.tail = new LogTail({
      log,
      logger,
      options,
      place,
      failures: this.failures,
      write: (events, cursor, from) => this.writer.write(events, cursor, from),
    });
    this.tables = new ReadModelTables({
      ...shared,
      tail: this.tail,
      writer: this.writer,
      failures: this.failures,
      dropped: () => this.stamps.dropped(),
      listen: (listener) => this.onApplied(listener),
    });
  }

  get position(): bigint {
    return this.place.cursor.position;
  }

  /**
   * The highest position through which the tables include every event the log shows: readiness and
   * the lag gauge report it. Usually the cursor's. On PostgreSQL a sequence hands out positions
   * before commit, so the tail reads in commit order and the last event read can stand below one
   * read before it: with every event applied, the cursor then trails the log's head until the next
   * write (a monitor waiting for lag 0 after the last write waited for ever). So the log is asked
   * what it shows past the cursor's position, and those applied already count, up to the first that
   * is not. At most one page is asked for: a read model further behind than that is not ready anyway.
   */
  async appliedThrough(): Promise<bigint> {
    const at = this.place.cursor.position;
    // A sole writer's log is read in position order: nothing past the cursor was read.
    if (this.log.soleWriter) return at;
    const shown = await this.log.readPage({ after: at, limit: APPLIED_THROUGH_PAGE });
    let through = at;
    for (const event of shown) {
      if (!this.place.applied.has(event.meta.position)) break;
      through = event.meta.position;
    }
    return through;
  }

  /** Whether the tables include the event at this log position (on PostgreSQL, a lower one may not yet). */
  applied(position: bigint): boolean {
    return this.place.applied.has(position);
  }

  /** The highest log position the tables include (on PostgreSQL a lower one may still be on its way). */
  get highestApplied(): bigint {
    return this.place.applied.highest;
  }

  /**
   * Null while the read model follows the log; otherwise the event it cannot apply. It is retried
   * with back-off (never in a hot loop); reads keep answering from the tables as they stand.
   */
  get failure(): ProjectionFailure | null {
    return this.failures.failure;
  }

  /** Increases with every applied batch; read caches key on it. */
  get version(): number {
    return this.stamps.version;
  }

  /**
   * Odd while a batch is being written, even when the tables are at rest; it moves on every batch.
   * A DuckDB prepared statement is planned against the statistics of the data it first saw (string
   * lengths, min/max), so a reader may reuse one only while this stays where it was at planning.
   */
  get dataEpoch(): number {
    return this.writer.dataEpoch;
  }

  /**
   * Holds the runner between batches until `release` is called (tests of a slow read model;
   * maintenance). Events keep being appended; writers waiting for them get 202 after the wait.
   * `reached` resolves once the runner has read events it may not write and stopped for the hold.
   */
  hold(): { release: () => void; reached: Promise<void> } {
    return this.tail.hold();
  }

  /**
   * Moves whenever the row table `table` changed (a batch wrote or deleted a row of it, or the
   * tables were dropped): a value read from that table alone stays right while this stays put.
   */
  tableVersion(table: string): number {
    return this.stamps.tableVersion(table);
  }

  /**
   * The stamp of an answer read from the resource tables and the activity tables `reads` (see
   * readVersions.ts): while it stays the same, so does the answer.
   */
  readStamp(reads: readonly string[]): string {
    return this.stamps.readStamp(reads);
  }

  /** `readStamp` as of now, for an answer whose reads are known only once it has been read. */
  readStampsNow(): (reads: readonly string[]) => string {
    return this.stamps.readStampsNow();
  }

  /** Moves with every batch that changes a resource table (not with activity alone): plans key on it. */
  get resourceVersion(): number {
    return this.stamps.resourceVersion;
  }

  /** The activity tables: their changes alone keep answers read from other tables. */
  get activityTables(): ReadonlySet<string> {
    return this.stamps.activityTables;
  }

  /**
   * A write answered without waiting for the read model (its answer needs nothing from the tables):
   * from now on, reads of what its events change wait for them (`ownWritesApplied`).
   */
  answeredAhead(events: readonly RecordedEvent[]) {
    for (const e of events)
      if (!this.place.applied.has(e.meta.position))
        this.ownWrites.note(e.meta.position, this.stamps.tablesChangedBy(e.type));
    this.tail.soon();
  }

  /**
   * Undefined when no write answered ahead (`answeredAhead`) is still to be applied to `tables`: the
   * usual case, no wait and no promise. Otherwise a promise that resolves once they are applied; it
   * resolves as well when the read model is stopped at an event it cannot apply (reads then answer
   * from the tables as they stand) and rejects with ProjectionBehind after `timeoutMs`.
   */
  ownWritesApplied(tables: TablesRead, timeoutMs: number): Promise<void> | undefined {
    if (this.ownWrites.size === 0 || this.tail.stopped) return undefined;
    const positions = this.ownWrites.blocking(tables);
    if (positions.length === 0) return undefined;
    return this.allApplied(positions, timeoutMs).catch((error: unknown) => {
      if (!(error instanceof ProjectionStalled)) throw error;
    });
  }

  /**
   * Waits for every one of `positions`, highest first: once it is applied the others mostly are
   * too (on PostgreSQL a lower position may commit later), so one timer usually does, however many
   * writes a slow read model has let pile up.
   */
  private async allApplied(positions: bigint[], timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    positions.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
    for (const p of positions)
      if (!this.place.applied.has(p)) await this.waitFor(p, Math.max(0, deadline - Date.now()));
  }

  /** Where applying the log spent its time, per table, since this runner started. */
  timings(): { table: string; ms: number }[] {
    return this.writer.timings();
  }

  /** Called after every applied batch with its events (e.g. to invalidate caches); the function returned stops it. */
  onApplied(listener: (events: readonly RecordedEvent[]) => void): () => void {
    this.listeners.push(listener);
    return () => void this.listeners.splice(this.listeners.indexOf(listener), 1);
  }

  /** How many positions the log holds past the tables (on PostgreSQL an upper bound: positions have gaps). */
  async behind(): Promise<number> {
    const head = await this.log.head();
    return Math.max(0, Number(head.position - this.place.cursor.position));
  }

  /**
   * Prepares the tables and catches up; throws if an event cannot be projected (the replay CLI).
   * `watch` is told how far behind the log the tables start, and may follow the catch-up (its
   * returned function is called when it ends).
   */
  async start(watch?: (behind: number) => (() => void) | null): Promise<void> {
    await this.tables.prepare();
    this.tail.startPolling();
    const stopWatching = watch?.(await this.behind()) ?? null;
    try {
      await this.catchUp();
    } finally {
      stopWatching?.();
    }
  }

  /**
   * Like `start`, but an event that cannot be projected does not stop the process: the failure is
   * recorded (`failure`, GET /api/status), retried with back-off, and the service answers reads
   * from the tables as they stand and writes with 503 until it clears. A start far behind the log
   * (a rebuild, a node new to a long log) logs how it comes along.
   */
  async startServing(): Promise<void> {
    const logProgress = (behind: number) => {
      if (behind < (this.options.progressFromEvents ?? CATCH_UP_LOGGED_FROM)) return null;
      const watch = watchCatchUp(
        (listener) => this.onApplied(listener),
        behind,
        (p) => this.logger.info(p, 'the read model is catching up with the log'),
        this.options.progressEveryMs ?? CATCH_UP_LOG_EVERY_MS,
      );
      return () => this.logger.info(watch.stop(), 'the read model caught up with the log');
    };
    await this.start(logProgress).catch((error: unknown) => {
      if (!this.failures.failure) throw error;
    });
  }

  /**
   * Stops following the log, and resolves once no batch is being written: the DuckDB connections
   * may be closed then (closing the writer while a batch ran on it crashed the process, SIGSEGV).
   */
  async stop(): Promise<void> {
    await this.tail.stop();
    // Work queued for the writer between batches finishes too.
    await this.writer.betweenBatches(async () => undefined);
  }

  /**
   * Resolves once this process's tables include the event at `position`. Rejects with
   * ProjectionStalled when the runner is stopped at an event it cannot apply, and with
   * ProjectionBehind when the event is not projected within `timeoutMs`.
   */
  waitFor(position: bigint, timeoutMs = this.options.waitTimeoutMs ?? 30_000): Promise<void> {
    return this.tail.waitFor(position, timeoutMs);
  }

  /**
   * Reads and applies everything new: resolves once a read finds nothing more. Concurrent calls
   * coalesce into one loop. While an event fails, calls before its next attempt is due reject at
   * once with the recorded failure.
   */
  catchUp(): Promise<void> {
    return this.tail.catchUp();
  }

  /** Throws the tables away and replays the whole log into them. */
  rebuild(): Promise<{ events: number; ms: number }> {
    return this.tables.rebuild();
  }

  /**
   * Checks, now, that the log still holds the last event the tables include (readiness asks when
   * the log's head stands below the read model). When it does not, the tables are rebuilt from
   * the log (in the background) and the reason is answered.
   */
  verifyBelongsToLog(): Promise<string | null> {
    return this.tables.verifyBelongsToLog();
  }

  /** True while the tables are rebuilt because they did not belong to the log (not ready meanwhile). */
  get rebuildingForTheLog(): boolean {
    return this.tables.rebuildingForTheLog;
  }

  /** The events projections pass over by the operator's word (PROJECTION_SKIP), as `<position>:<projection>`. */
  get skippedEvents(): readonly string[] {
    return [...this.failures.skipped];
  }

  /** Why the tables were last rebuilt for not belonging to the log, if they were. */
  get rebuildReason(): string | null {
    return this.tables.rebuildReason;
  }

  /**
   * Runs `work` on the writer connection between two batches. A batch is one transaction on that
   * connection: a statement issued meanwhile (the SQL catalog's views, made at start while other
   * processes' events already arrive) would join it, be invisible to readers until it commits, and
   * vanish if it rolls back.
   */
  betweenBatches<T>(work: () => Promise<T>): Promise<T> {
    return this.writer.betweenBatches(work);
  }

  /** What follows a committed batch: the cursor, the versions, the waiters and the listeners. */
  private recordApplied(
    events: readonly RecordedEvent[],
    cursor: LogCursor,
    written: readonly BatchRowStore[],
  ) {
    this.place.moveTo(events, cursor);
    this.stamps.batchApplied(written, events);
    for (const e of events) {
      this.place.applied.add(e.meta.position);
      this.ownWrites.applied(e.meta.position);
      this.place.waiters.reached(e.meta.position);
    }
    for (const l of this.listeners) l(events);
  }
}
