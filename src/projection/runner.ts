import type { Logger } from 'pino';
import type { EventType, RecordedEvent } from '../../events';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Duck } from '../duckdb/database';
import { isMemoryShortageMessage } from '../duckdb/errors';
import { serialQueue } from '../eventlog/queue';
import { cursorPassed, logStart, type EventLog, type LogCursor, type LogNews } from '../eventlog/types';
import { quoteString } from '../shared/quoting';
import { applyEvents } from './batch';
import { CommittedRows } from './committedRows';
import { createTableSql, type BatchRowStore } from './rows';
import type { SchemaProjection, TableProjection } from './types';
import { AppliedPositions, PositionWaiters } from './appliedPositions';
import { CHECKPOINT_TABLE, readModelFingerprint } from './checkpoint';
import {
  describeFailure,
  isStorageErrorMessage,
  nextFailure,
  ProjectionStalled,
  type ProjectionFailure,
} from './failures';
import { historyTableOf, versionsTableOf } from './history';
import { OwnWrites, type TablesChanged, type TablesRead } from './ownWrites';
import { ReadVersions } from './readVersions';
import { messageOf } from '../shared/errors';

export { CHECKPOINT_TABLE } from './checkpoint';
export {
  describeFailure,
  ProjectionBehind,
  ProjectionStalled,
  retryAfterSeconds,
  type ProjectionFailure,
} from './failures';

export type ProjectionRunnerOptions = {
  batchSize?: number;
  /** The pause before a batch nobody waits for, after another (see `pauseBeforeNextBatch`); default 10 ms. */
  batchPauseMs?: number;
  /** How often to look for events written by other processes; 0 disables polling. */
  pollMs?: number;
  /**
   * Also hear of other processes' commits as they happen (PostgreSQL LISTEN/NOTIFY), and catch up
   * at once; polling stays as the fallback for news lost on the way.
   */
  follow?: boolean;
  /** How long a writer waits for its own events to be projected before giving up. */
  waitTimeoutMs?: number;
  /** Longest pause between two attempts at an event that failed to project (they double up to it). */
  retryMaxMs?: number;
  /**
   * `<position>:<projection>` pairs: that projection passes over that event (PROJECTION_SKIP). The
   * list is part of the read model's fingerprint: a change to it rebuilds the tables, so a rebuild
   * equals the live model and dropping a pair once the projection is fixed brings the event in.
   */
  skip?: readonly string[];
};

/** Longest pause between looks for an announced transaction the log does not show yet. */
const CHASE_MAX_MS = 100;

/** How many times a batch that met DuckDB's memory limit is written before it counts as failed. */
const MEMORY_SHORTAGE_ATTEMPTS = 5;

/**
 * Tails the log in order and applies it to the DuckDB tables, one transaction per batch with the
 * checkpoint in the same transaction: a crash never skips or double-applies an event. A change to
 * any table definition changes the fingerprint, and the tables are then rebuilt from the log.
 */
export class ProjectionRunner {
  private cursor: LogCursor = logStart;
  /** The id of the event at the cursor (the last one applied), null before the first. */
  private cursorEventId: string | null = null;
  /** Why the tables were last dropped and rebuilt at start, if they were (GET /api/status). */
  private rebuiltBecause: string | null = null;
  private rebuildingForLog: Promise<void> | null = null;
  private readonly applied = new AppliedPositions();
  private readonly waiters = new PositionWaiters();
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private unfollow: (() => Promise<void>) | null = null;
  /** The newest transaction announced that this runner has not read yet (see `chase`). */
  private announced: string | null = null;
  /** The log's notifications dropped and are not back yet (logged once per loss). */
  private notificationsLost = false;
  private chaseTimer: NodeJS.Timeout | null = null;
  private chaseDelayMs = 0;
  private lingerTimer: NodeJS.Timeout | null = null;
  /** Someone called `catchUp`: the loop reads until nothing is left, without pausing. */
  private wanted = false;
  private stopped = false;
  private failed: ProjectionFailure | null = null;
  /** After a failed batch, this many events are applied one at a time, to find the one that fails. */
  private isolating = 0;
  private held: { released: Promise<void>; release: () => void } | null = null;
  /** Whose turn it is on the writer connection: a batch, or work between batches. */
  private readonly writerTurn = serialQueue();
  /** Whether a failed batch's transaction could not be rolled back yet (see `rollBack`). */
  private openAfterFailure = false;
  /** The last batch, when its call to commit reported an error: it may have committed (see `settle`). */
  private unsettled: {
    events: readonly RecordedEvent[];
    cursor: LogCursor;
    stores: readonly BatchRowStore[];
  } | null = null;
  /** Increases with every applied batch; read caches key on it. */
  version = 0;
  /** Per table, increases with every batch that wrote or deleted a row of it (`tableVersion`). */
  private readonly tableVersions = new Map<string, number>();
  /** Increases when the tables are dropped: every table's version moves with it. */
  private generation = 0;
  /**
   * Odd while a batch is being written, even when the tables are at rest; it moves on every batch.
   * A DuckDB prepared statement is planned against the statistics of the data it first saw (string
   * lengths, min/max), so a reader may reuse one only while this stays where it was at planning.
   */
  dataEpoch = 0;
  private readonly listeners: ((events: readonly RecordedEvent[]) => void)[] = [];
  /** Milliseconds spent per table since start (uploaded files' tables each on their own line). */
  private readonly spent = new Map<string, number>();
  private readonly fingerprint: string;
  /** `<position>:<projection>` pairs passed over (PROJECTION_SKIP). */
  private readonly skipped: ReadonlySet<string>;
  /** Rows written by this runner's committed batches, read back without a query. */
  private readonly committed = new CommittedRows();
  /** Writes this process answered before they were applied (see `answeredAhead`). */
  private readonly ownWrites = new OwnWrites();
  private readonly tablesByEventType = new Map<string, TablesChanged>();
  /** What each answer read from the tables is stamped with (see readVersions.ts). */
  private readonly readVersions: ReadVersions;

  constructor(
    private readonly duck: Duck,
    private readonly log: EventLog,
    private readonly projections: readonly TableProjection[],
    private readonly logger: Logger,
    private readonly options: ProjectionRunnerOptions = {},
    private readonly schemaProjections: readonly SchemaProjection[] = [],
  ) {
    this.skipped = new Set(options.skip ?? []);
    this.fingerprint = readModelFingerprint(projections, schemaProjections, [...this.skipped]);
    this.readVersions = new ReadVersions(
      new Set(
        projections
          .filter((p) => p.activity || p.handles === 'all')
          .flatMap((p) =>
            p.history ? [p.table, versionsTableOf(p.table), historyTableOf(p.table)] : [p.table],
          ),
      ),
      (table) => this.tableVersion(table),
    );
  }

  get position(): bigint {
    return this.cursor.position;
  }

  /** The highest log position the tables include (on PostgreSQL a lower one may still be on its way). */
  get highestApplied(): bigint {
    return this.applied.highest;
  }

  /**
   * Null while the read model follows the log; otherwise the event it cannot apply. It is retried
   * with back-off (never in a hot loop); reads keep answering from the tables as they stand.
   */
  get failure(): ProjectionFailure | null {
    return this.failed;
  }

  /**
   * Holds the runner between batches until `release` is called (tests of a slow read model;
   * maintenance). Events keep being appended; writers waiting for them get 202 after the wait.
   */
  hold(): { release: () => void } {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const held = { released, release };
    this.held = held;
    return {
      release: () => {
        if (this.held === held) this.held = null;
        release();
        // Goes on as it would have: a batch nobody waits for is followed by a pause.
        void this.follow().catch(() => undefined);
      },
    };
  }

  /**
   * Moves whenever the row table `table` changed (a batch wrote or deleted a row of it, or the
   * tables were dropped): a value read from that table alone stays right while this stays put.
   */
  tableVersion(table: string): number {
    return this.generation * 2 ** 32 + (this.tableVersions.get(table) ?? 0);
  }

  /**
   * The stamp of an answer read from the resource tables and the activity tables `reads` (see
   * readVersions.ts): while it stays the same, so does the answer.
   */
  readStamp(reads: readonly string[]): string {
    return this.readVersions.stamp(this.generation, reads);
  }

  /** `readStamp` as of now, for an answer whose reads are known only once it has been read. */
  readStampsNow(): (reads: readonly string[]) => string {
    return this.readVersions.snapshot(this.generation);
  }

  /** Moves with every batch that changes a resource table (not with activity alone): plans key on it. */
  get resourceVersion(): number {
    return this.generation * 2 ** 32 + this.readVersions.resourceCount;
  }

  /** The activity tables: their changes alone keep answers read from other tables. */
  get activityTables(): ReadonlySet<string> {
    return this.readVersions.activityTables;
  }

  private touchTables(stores: readonly BatchRowStore[], events: readonly RecordedEvent[]) {
    for (const store of stores)
      if (store.changed) this.tableVersions.set(store.table, (this.tableVersions.get(store.table) ?? 0) + 1);
    // A resource table changed: rows written to one (a projection may write another's table), or
    // an event whose tables are not known by name (a file's, a knowledge base's).
    const activity = this.readVersions.activityTables;
    this.readVersions.applied(
      stores.some((s) => s.changed && !activity.has(s.table)) ||
        events.some((e) => this.tablesChangedBy(e.type) === 'all'),
    );
  }

  /** The tables an event of this type changes; a schema projection's tables are not known by name. */
  private tablesChangedBy(eventType: EventType): TablesChanged {
    let tables = this.tablesByEventType.get(eventType);
    if (tables) return tables;
    const names = new Set<string>();
    for (const p of this.projections)
      if (p.handles === 'all' || p.handles.includes(eventType)) {
        names.add(p.table);
        if (p.history) names.add(versionsTableOf(p.table)).add(historyTableOf(p.table));
      }
    const schemaChanging = this.schemaProjections.some((p) => p.handles.includes(eventType));
    tables = schemaChanging ? 'all' : names;
    this.tablesByEventType.set(eventType, tables);
    return tables;
  }

  /**
   * A write answered without waiting for the read model (its answer needs nothing from the tables):
   * from now on, reads of what its events change wait for them (`ownWritesApplied`).
   */
  answeredAhead(events: readonly RecordedEvent[]) {
    for (const e of events)
      if (!this.applied.has(e.meta.position))
        this.ownWrites.note(e.meta.position, this.tablesChangedBy(e.type));
    this.soon();
  }

  /**
   * Catches up now, unless the runner is pausing between batches (`pauseBeforeNextBatch`): then the
   * next batch, due shortly, takes this news too.
   */
  private soon() {
    if (this.lingerTimer || this.stopped) return;
    void this.follow().catch(() => undefined);
  }

  /**
   * After a batch nobody waited for, the next one waits `batchPauseMs`, so that what is appended
   * meanwhile goes into it: DuckDB's price is mostly per batch, and a runner that read again at
   * once wrote a batch per event or two as a single client's writes trickled in (about 10 ms of
   * CPU each). Anyone waiting for a position (`waitFor`: a read after a write answered ahead, a
   * writer waiting for its row) still makes it go at once.
   */
  private pauseBeforeNextBatch() {
    if (this.lingerTimer || this.stopped) return;
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = null;
      void this.follow().catch(() => undefined);
    }, this.options.batchPauseMs ?? 10);
    this.lingerTimer.unref();
  }

  /**
   * Undefined when no write answered ahead (`answeredAhead`) is still to be applied to `tables`: the
   * usual case, no wait and no promise. Otherwise a promise that resolves once they are applied; it
   * resolves as well when the read model is stopped at an event it cannot apply (reads then answer
   * from the tables as they stand) and rejects with ProjectionBehind after `timeoutMs`.
   */
  ownWritesApplied(tables: TablesRead, timeoutMs: number): Promise<void> | undefined {
    if (this.ownWrites.size === 0 || this.stopped) return undefined;
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
      if (!this.applied.has(p)) await this.waitFor(p, Math.max(0, deadline - Date.now()));
  }

  /** Where applying the log spent its time, per table, since this runner started. */
  timings(): { table: string; ms: number }[] {
    return [...this.spent].map(([table, ms]) => ({ table, ms: Math.round(ms) }));
  }

  private timed = async <T>(table: string, work: () => Promise<T> | T): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.spent.set(table, (this.spent.get(table) ?? 0) + performance.now() - started);
    }
  };

  /** Called after every applied batch with its events (e.g. to invalidate caches). */
  onApplied(listener: (events: readonly RecordedEvent[]) => void) {
    this.listeners.push(listener);
  }

  /** Prepares the tables and catches up; throws if an event cannot be projected (the replay CLI). */
  async start(): Promise<void> {
    await this.prepareTables();
    this.startPolling();
    await this.catchUp();
  }

  /**
   * Like `start`, but an event that cannot be projected does not stop the process: the failure is
   * recorded (`failure`, GET /api/status), retried with back-off, and the service answers reads
   * from the tables as they stand and writes with 503 until it clears.
   */
  async startServing(): Promise<void> {
    await this.prepareTables();
    this.startPolling();
    await this.catchUp().catch((error: unknown) => {
      if (!this.failed) throw error;
    });
  }

  private startPolling() {
    const pollMs = this.options.pollMs ?? 0;
    if (pollMs > 0 && !this.timer) {
      this.timer = setInterval(() => this.soon(), pollMs);
      this.timer.unref();
    }
    if (this.options.follow && !this.unfollow) this.unfollow = this.log.follow(this.heard);
  }

  /** News from the log: another process committed, or the news feed (re)started or dropped. */
  private heard = (news: LogNews) => {
    if (this.stopped) return;
    switch (news.kind) {
      case 'committed':
        // Usually this process's own append, read already by the writer waiting for it.
        if (cursorPassed(this.cursor, news.transactionId)) return;
        if (this.announced === null || BigInt(news.transactionId) > BigInt(this.announced))
          this.announced = news.transactionId;
        break;
      case 'listening':
        if (this.notificationsLost) this.logger.warn('log notifications back: listening again');
        this.notificationsLost = false;
        // The log answers again: a read of it that failed (not an event, not the disk) is retried
        // now rather than when its back-off comes round (writes are refused until it is).
        if (this.failed && this.failed.position === null && !this.failed.storage)
          this.failed = { ...this.failed, retryAt: 0 };
        break;
      case 'lost':
        // Once per loss (the feed reconnects with back-off; each failed attempt is another 'lost').
        if (!this.notificationsLost)
          this.logger.warn(
            { error: news.error },
            'log notifications lost: polling alone until they are back',
          );
        this.notificationsLost = true;
        return;
      default: {
        const unknown: never = news;
        return unknown;
      }
    }
    this.chaseDelayMs = 0;
    this.soon();
  };

  /**
   * A transaction announced as committed may not be readable yet: the tailer reads only behind
   * every transaction still running (see readAll), and an older one anywhere on the server may
   * still be open. Look again soon, backing off, rather than wait for the next poll.
   */
  private chase() {
    if (this.announced === null) return;
    if (cursorPassed(this.cursor, this.announced)) {
      this.announced = null;
      return;
    }
    // A catch-up is due shortly anyway: it will read the announced transaction if it can.
    if (this.failed || this.stopped || this.chaseTimer || this.lingerTimer) return;
    this.chaseDelayMs = Math.min(CHASE_MAX_MS, Math.max(1, this.chaseDelayMs * 2));
    this.chaseTimer = setTimeout(() => {
      this.chaseTimer = null;
      void this.follow().catch(() => undefined);
    }, this.chaseDelayMs);
    this.chaseTimer.unref();
  }

  /**
   * Stops following the log, and resolves once no batch is being written: the DuckDB connections
   * may be closed then (closing the writer while a batch ran on it crashed the process, SIGSEGV).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.chaseTimer) clearTimeout(this.chaseTimer);
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    void this.unfollow?.();
    this.unfollow = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.held?.release();
    this.held = null;
    this.waiters.releaseAll();
    await this.running?.catch(() => undefined);
    // Work queued for the writer between batches finishes too.
    await this.writerTurn(async () => undefined);
  }

  /**
   * Resolves once this process's tables include the event at `position`. Rejects with
   * ProjectionStalled when the runner is stopped at an event it cannot apply, and with
   * ProjectionBehind when the event is not projected within `timeoutMs`.
   */
  waitFor(position: bigint, timeoutMs = this.options.waitTimeoutMs ?? 30_000): Promise<void> {
    if (this.applied.has(position)) return Promise.resolve();
    if (this.failed) return Promise.reject(new ProjectionStalled(position, this.failed));
    const waiting = this.waiters.wait(position, timeoutMs);
    // Reads at once, pause or not, until no waiter is left; then batches pause again. (Not
    // catchUp: it reads until a read finds nothing, which under steady writes never happens, so
    // one wait would end the pauses for good and DuckDB would write a batch per event or two.)
    void this.follow().catch(() => undefined);
    return waiting;
  }

  /**
   * Reads and applies everything new: resolves once a read finds nothing more. Concurrent calls
   * coalesce into one loop. While an event fails, calls before its next attempt is due reject at
   * once with the recorded failure.
   */
  catchUp(): Promise<void> {
    this.wanted = true;
    return this.follow();
  }

  /**
   * Reads and applies what is new, pausing between batches nobody waits for (news from the log,
   * timers): the loop `catchUp` runs too, without its promise to read until nothing is left.
   */
  private follow(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const failed = this.failed;
    if (failed && Date.now() < failed.retryAt)
      return Promise.reject(new Error(`The read model is stopped: ${describeFailure(failed)}`));
    this.running = (async () => {
      // The next batch, read while this one is written when the log holds more than a batch.
      let ahead: { from: LogCursor; read: ReturnType<EventLog['readAll']> } | undefined;
      try {
        do {
          this.again = false;
          for (;;) {
            if (this.stopped) return;
            const limit = this.isolating > 0 ? 1 : (this.options.batchSize ?? 1000);
            // Read ahead from where the last batch ended: good only if that batch was written (a
            // failed one leaves the cursor where it was, and only then do batches shrink to one).
            const read = ahead?.from === this.cursor ? ahead.read : this.log.readAll(this.cursor, limit);
            ahead = undefined;
            const { events, cursor } = await read;
            if (events.length === 0) {
              this.wanted = false;
              // Caught up: the log answered and nothing is left to apply, so nothing is failing. (A
              // failed read of the log cleared only by a batch applied stayed failed when no event
              // came: its writes refused, two nodes on one log each waited for the other's.)
              this.recovered();
              break;
            }
            // Checked after the read: a read already under way when the runner was held may have
            // returned events appended after that, which must wait too.
            while (this.held) await this.held.released;
            if (this.stopped) return;
            // A full batch: more is waiting (a replay, a start after a while away). The log reads
            // the next batch while DuckDB writes this one; live batches, smaller, are read after.
            if (events.length === limit && this.isolating === 0) {
              const next = this.log.readAll(cursor, limit);
              next.catch(() => undefined);
              ahead = { from: cursor, read: next };
            }
            try {
              await this.applyBatch(events, cursor);
            } catch (error) {
              // A disk that cannot take the batch: no event is at fault, and one at a time would
              // only fail as many times. The cursor stays at the last committed checkpoint.
              if (isStorageErrorMessage(messageOf(error))) {
                this.isolating = 0;
                throw error;
              }
              // One event of the batch failed (or its rows): apply them one by one, so the tables
              // include everything before the failing event and the failure names it.
              if (events.length > 1) {
                this.isolating = events.length;
                continue;
              }
              throw error;
            }
            if (this.isolating > 0) this.isolating--;
            this.recovered();
            // Caught up with what there was, and nobody waits: let more arrive before the next
            // batch (see `soon`) rather than write one per event or two as they trickle in.
            if (events.length < limit && this.isolating === 0 && !this.wanted && !this.waiters.any()) {
              this.again = false;
              this.pauseBeforeNextBatch();
              break;
            }
          }
        } while (this.again);
        this.chase();
      } catch (error) {
        this.recordFailure(error);
        throw error;
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private recovered() {
    if (!this.failed) return;
    this.logger.warn({ failure: this.failureForLog(this.failed) }, 'projection recovered');
    this.failed = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private failureForLog(f: ProjectionFailure) {
    return { ...f, position: f.position?.toString() ?? null, retryAt: new Date(f.retryAt).toISOString() };
  }

  /** Remembers why, wakes every writer waiting (they cannot be served now), schedules a retry. */
  private recordFailure(error: unknown) {
    const { failure, delay, applyError, firstOfEpisode } = nextFailure(
      this.failed,
      error,
      this.options.retryMaxMs ?? 60_000,
    );
    this.failed = failure;
    this.duck.noticeFailure(applyError?.original ?? error);
    // Once per episode (a full disk fails every attempt until space is freed: one line, not one a
    // second); each later attempt at debug level, and `projection recovered` when it clears.
    this.logger[firstOfEpisode ? 'error' : 'debug'](
      { err: applyError?.original ?? error, failure: this.failureForLog(failure) },
      failure.storage
        ? 'projection failed: the disk holding the read model cannot take the batch; retrying every few seconds'
        : 'projection failed: retrying with back-off',
    );
    this.waiters.rejectAll((position) => new ProjectionStalled(position, failure));
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (!this.stopped) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        // This timer is the retry: a timer may fire a few ms before Date.now() reaches retryAt
        // (libuv measures from the loop's cached time, stale under load), and `follow` would then
        // refuse it with nothing left to try again until the next poll or news.
        if (this.failed === failure) this.failed = { ...failure, retryAt: 0 };
        void this.catchUp().catch(() => undefined);
      }, delay);
      this.retryTimer.unref();
    }
  }

  /** Throws the tables away and replays the whole log into them. */
  async rebuild(): Promise<{ events: number; ms: number }> {
    const started = Date.now();
    const from = this.cursor.position;
    await this.running?.catch(() => undefined);
    // An explicit rebuild tries again at once.
    if (this.failed) this.failed = { ...this.failed, retryAt: 0 };
    this.isolating = 0;
    this.dataEpoch++;
    try {
      await this.dropTables();
      await this.prepareTables();
    } finally {
      this.dataEpoch++;
    }
    let count = 0;
    const listener = (events: readonly RecordedEvent[]) => (count += events.length);
    this.listeners.push(listener);
    try {
      await this.catchUp();
    } finally {
      this.listeners.splice(this.listeners.indexOf(listener), 1);
    }
    this.logger.info({ events: count, previousPosition: from.toString() }, 'projections rebuilt');
    return { events: count, ms: Date.now() - started };
  }

  private async dropTables() {
    this.committed.clear();
    this.unsettled = null;
    this.generation++;
    for (const p of this.projections) await this.duck.writer.run(`DROP TABLE IF EXISTS "${p.table}"`);
    for (const p of this.schemaProjections) await p.drop(this.duck.writer);
    await this.duck.writer.run(`DROP TABLE IF EXISTS ${CHECKPOINT_TABLE}`);
  }

  private async prepareTables(): Promise<void> {
    const w = this.duck.writer;
    await w.run(
      `CREATE TABLE IF NOT EXISTS ${CHECKPOINT_TABLE} (id INTEGER, position BIGINT, transaction_id VARCHAR, fingerprint VARCHAR)`,
    );
    // Read models written before it was kept have no id of the last event applied.
    await w.run(`ALTER TABLE ${CHECKPOINT_TABLE} ADD COLUMN IF NOT EXISTS event_id VARCHAR`);
    const stored = await this.storedCheckpoint(w);
    if (stored && stored.fingerprint !== this.fingerprint) {
      this.logger.info('projection definitions changed: rebuilding from the log');
      await this.dropTables();
      return this.prepareTables();
    }
    if (stored) {
      const mismatch = await this.logMismatch(BigInt(stored.position), stored.event_id);
      if (mismatch) {
        this.rebuiltBecause = mismatch;
        this.logger.warn(
          { reason: mismatch },
          'the read model does not belong to this log: rebuilding from the log',
        );
        await this.dropTables();
        return this.prepareTables();
      }
    }
    // One call (DuckDB runs a text's statements in order) rather than one per table: a start
    // made some sixty trips to DuckDB's thread here.
    if (this.projections.length) await w.run(this.projections.map(createTableSql).join(';\n'));
    for (const p of this.schemaProjections) await p.prepare(w);
    if (!stored) {
      await w.run(`INSERT INTO ${CHECKPOINT_TABLE} VALUES (1, 0, NULL, ?, NULL)`, [this.fingerprint]);
      this.cursor = logStart;
      this.cursorEventId = null;
    } else {
      this.cursor = { position: BigInt(stored.position), transactionId: stored.transaction_id };
      this.cursorEventId = stored.event_id;
    }
    // Everything before the checkpoint is in the tables already. On PostgreSQL a late commit can
    // sit below its position, but it will still be read (the cursor orders by transaction) and
    // recorded then: the log says below which position nothing is left to read.
    this.applied.reset(await this.log.unreadFloor(this.cursor));
  }

  /**
   * Why tables that include the log up to `position`, ending with the event `eventId`, cannot be
   * this log's read model, or null when they can: the log must still hold that very event there. A
   * log restored from an older copy (shorter: its next writes would take positions the tables
   * claim to include, and be skipped as applied) or another log altogether does not.
   */
  private async logMismatch(position: bigint, eventId: string | null): Promise<string | null> {
    if (position === 0n) return null;
    const atPosition = await this.log.eventIdAt(position);
    if (atPosition === null)
      return `the read model includes the log up to event ${position}, which the log does not hold (a log restored from an older copy, or another log)`;
    if (eventId !== null && atPosition !== eventId)
      return `the read model's event ${position} is ${eventId}, the log's is ${atPosition} (another log, or one rewritten)`;
    return null;
  }

  /**
   * Checks, now, that the log still holds the last event the tables include (readiness asks when
   * the log's head stands below the read model). When it does not, the tables are rebuilt from
   * the log (in the background) and the reason is answered.
   */
  async verifyBelongsToLog(): Promise<string | null> {
    if (this.rebuildingForLog) return this.rebuiltBecause;
    const mismatch = await this.logMismatch(this.cursor.position, this.cursorEventId);
    if (mismatch && !this.stopped && !this.rebuildingForLog) {
      this.rebuiltBecause = mismatch;
      this.logger.warn(
        { reason: mismatch },
        'the read model does not belong to this log: rebuilding from the log',
      );
      this.rebuildingForLog = this.rebuild()
        .then(() => undefined)
        .catch((error: unknown) => this.logger.error({ err: error }, 'rebuilding the read model failed'))
        .finally(() => (this.rebuildingForLog = null));
    }
    return mismatch;
  }

  /** True while the tables are rebuilt because they did not belong to the log (not ready meanwhile). */
  get rebuildingForTheLog(): boolean {
    return this.rebuildingForLog !== null;
  }

  /** The events projections pass over by the operator's word (PROJECTION_SKIP), as `<position>:<projection>`. */
  get skippedEvents(): readonly string[] {
    return [...this.skipped];
  }

  /** Why the tables were last rebuilt for not belonging to the log, if they were. */
  get rebuildReason(): string | null {
    return this.rebuiltBecause;
  }

  /**
   * Runs `work` on the writer connection between two batches. A batch is one transaction on that
   * connection: a statement issued meanwhile (the SQL catalog's views, made at start while other
   * processes' events already arrive) would join it, be invisible to readers until it commits, and
   * vanish if it rolls back.
   */
  betweenBatches<T>(work: () => Promise<T>): Promise<T> {
    return this.writerTurn(work);
  }

  /** The id of the event the cursor stands at: one of the batch's, or the one it stood at before. */
  private eventIdAtCursor(events: readonly RecordedEvent[], cursor: LogCursor): string | null {
    for (let i = events.length - 1; i >= 0; i--)
      if (events[i]!.meta.position === cursor.position) return events[i]!.meta.eventId;
    return cursor.position === this.cursor.position ? this.cursorEventId : null;
  }

  /**
   * Writes a batch; one that failed for want of DuckDB's memory (heavy SQL queries held it) is
   * tried again, up to MEMORY_SHORTAGE_ATTEMPTS times, once the queries holding memory are
   * stopped: the batch is not at fault, and failing it would answer every waiting write 503.
   */
  private async applyBatch(events: readonly RecordedEvent[], cursor: LogCursor) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.writerTurn(() => this.writeBatch(events, cursor));
      } catch (error) {
        const message = messageOf(error);
        if (!isMemoryShortageMessage(message) || attempt >= MEMORY_SHORTAGE_ATTEMPTS || this.stopped)
          throw error;
        this.logger.warn(
          { attempt, events: events.length, error: message.split('\n')[0] },
          "a batch met DuckDB's memory limit: stopping heavy SQL queries and trying it again",
        );
        // Making room can meet the shortage too (its look at DuckDB's memory): the next try says.
        await this.writerTurn(() =>
          this.duck.makeRoomForWriter(this.duck.writer, { shortage: true }).catch(() => undefined),
        );
      }
    }
  }

  /**
   * Ends the failed batch's transaction. A ROLLBACK can meet DuckDB's memory limit too: it was
   * then left open, aborted, and every later batch failed on it ("Current transaction is
   * aborted") until a restart. So room is made and it is tried again; one that still fails is
   * tried again before the next batch begins.
   */
  private async rollBack(w: DuckDBConnection) {
    for (let attempt = 1; ; attempt++) {
      try {
        await w.run('ROLLBACK');
        this.openAfterFailure = false;
        return;
      } catch (error) {
        const message = messageOf(error);
        if (/no transaction is active/.test(message)) {
          this.openAfterFailure = false;
          return;
        }
        this.openAfterFailure = true;
        if (attempt >= MEMORY_SHORTAGE_ATTEMPTS || !isMemoryShortageMessage(message)) {
          this.logger.error({ err: error }, "the read model's writer could not roll a failed batch back");
          return;
        }
        await this.duck.makeRoomForWriter(w, { shortage: true }).catch(() => undefined);
      }
    }
  }

  /** The checkpoint row the tables hold (none before `prepareTables` made it). */
  private async storedCheckpoint(w: DuckDBConnection) {
    const rows = (
      await w.runAndReadAll(`SELECT position, transaction_id, fingerprint, event_id FROM ${CHECKPOINT_TABLE}`)
    ).getRowObjectsJS() as {
      position: bigint;
      transaction_id: string | null;
      fingerprint: string;
      event_id: string | null;
    }[];
    return rows[0];
  }

  /**
   * Before the next batch, after one whose call to commit reported an error: did it commit all
   * the same? DuckDB can fail a text after its COMMIT went through (out of memory while answering
   * it): seen here, the checkpoint stood at the batch's end after the error, and writing the
   * batch again made a second row of a skill. Its events are then applied, and dropped from
   * `events` (a read from the old cursor holds them again); what is left is returned.
   */
  private async settle(
    w: DuckDBConnection,
    events: readonly RecordedEvent[],
  ): Promise<readonly RecordedEvent[]> {
    const unsettled = this.unsettled;
    if (!unsettled) return events;
    const stored = await this.storedCheckpoint(w);
    const committed =
      stored !== undefined &&
      BigInt(stored.position) === unsettled.cursor.position &&
      stored.transaction_id === unsettled.cursor.transactionId;
    this.unsettled = null;
    if (!committed) return events;
    this.logger.warn(
      { position: unsettled.cursor.position.toString(), events: unsettled.events.length },
      'a batch DuckDB reported failed had committed: it counts as applied, and is not written again',
    );
    this.recordApplied(unsettled.events, unsettled.cursor, unsettled.stores);
    const done = new Set(unsettled.events.map((e) => e.meta.position));
    return events.filter((e) => !done.has(e.meta.position));
  }

  /** What follows a committed batch: the cursor, the versions, the waiters and the listeners. */
  private recordApplied(
    events: readonly RecordedEvent[],
    cursor: LogCursor,
    written: readonly BatchRowStore[],
  ) {
    this.cursor = cursor;
    this.cursorEventId = this.eventIdAtCursor(events, cursor);
    this.version++;
    this.touchTables(written, events);
    for (const e of events) {
      this.applied.add(e.meta.position);
      this.ownWrites.applied(e.meta.position);
      this.waiters.reached(e.meta.position);
    }
    for (const l of this.listeners) l(events);
  }

  private async writeBatch(read: readonly RecordedEvent[], cursor: LogCursor) {
    const w = this.duck.writer;
    if (this.openAfterFailure) await this.rollBack(w);
    const events = await this.settle(w, read);
    // Every event read was in the batch that committed after all: the cursor stands past them.
    if (events.length === 0) return;
    this.dataEpoch++;
    let begun = false;
    let committing: readonly BatchRowStore[] | null = null;
    let written: readonly BatchRowStore[] = [];
    const transaction = {
      begin: async () => {
        if (begun) return;
        begun = true;
        await w.run('BEGIN TRANSACTION');
      },
    };
    try {
      const batch = await applyEvents(events, {
        writer: w,
        log: this.log,
        projections: this.projections,
        schemaProjections: this.schemaProjections,
        timed: this.timed,
        transaction,
        committed: this.committed,
        skip: this.skipped,
      });
      const lastEventId = this.eventIdAtCursor(events, cursor);
      const checkpoint = `UPDATE ${CHECKPOINT_TABLE} SET position = ${cursor.position}, transaction_id = ${
        cursor.transactionId === null ? 'NULL' : quoteString(cursor.transactionId)
      }, event_id = ${lastEventId === null ? 'NULL' : quoteString(lastEventId)}`;
      // A small batch is one call: its rows, the checkpoint and the commit, run off the main thread.
      const rest = [...batch.statements, checkpoint, 'COMMIT'];
      // The commit must not meet DuckDB's memory limit: heavy SQL queries stop first.
      await this.duck.makeRoomForWriter(w);
      if (!begun) {
        begun = true;
        rest.unshift('BEGIN TRANSACTION');
      }
      committing = batch.stores;
      await this.timed('(batch write)', () => w.run(rest.join(';\n')));
      for (const store of batch.stores) store.rememberCommitted();
      written = batch.stores;
    } catch (error) {
      // A multi-statement text stops at its failing statement, leaving the transaction open.
      if (begun) await this.rollBack(w);
      this.committed.clear();
      // The error may have come after the commit: the next batch looks first (`settle`).
      if (committing) this.unsettled = { events, cursor, stores: committing };
      throw error;
    } finally {
      this.dataEpoch++;
    }
    this.recordApplied(events, cursor, written);
  }
}
