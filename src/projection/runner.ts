import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { RecordedEvent } from '../../events';
import type { Duck } from '../duckdb/database';
import { logStart, type EventLog, type LogCursor } from '../eventlog/types';
import { BatchRowStore, createTableSql } from './rows';
import type { SchemaProjection, TableProjection } from './types';
import { SECRET_RULES_VERSION } from '../shared/secrets';

export const CHECKPOINT_TABLE = '_mindledger_checkpoint';

/** Remembers which positions were applied, so a writer can wait for exactly its own events. */
class AppliedPositions {
  private readonly recent = new Set<bigint>();
  /** Every position below this was applied or never existed. */
  private floor = 0n;

  add(position: bigint) {
    this.recent.add(position);
    if (this.recent.size > 20_000) {
      const sorted = [...this.recent].sort((a, b) => (a < b ? -1 : 1));
      for (const p of sorted.slice(0, 10_000)) this.recent.delete(p);
      this.floor = sorted[10_000] ?? this.floor;
    }
  }
  has(position: bigint) {
    return position < this.floor || this.recent.has(position);
  }
  reset(floor: bigint) {
    this.recent.clear();
    this.floor = floor;
  }
}

/** A schema projection's time is counted per table it builds, when the event names one (files do). */
const schemaTimingKey = (p: SchemaProjection, event: RecordedEvent) => {
  const data = event.data as unknown;
  const name = data !== null && typeof data === 'object' && 'name' in data ? String(data.name) : null;
  return name === null ? p.name : `${p.name}: ${name}`;
};

export type ProjectionRunnerOptions = {
  batchSize?: number;
  /** How often to look for events written by other processes; 0 disables polling. */
  pollMs?: number;
  /** How long a writer waits for its own events to be projected before giving up. */
  waitTimeoutMs?: number;
  /** Longest pause between two attempts at an event that failed to project (they double up to it). */
  retryMaxMs?: number;
};

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
class ProjectionApplyError extends Error {
  constructor(
    readonly event: RecordedEvent | null,
    readonly projection: string,
    readonly original: unknown,
  ) {
    super(original instanceof Error ? original.message : String(original));
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

type Waiter = { resolve: () => void; reject: (error: Error) => void };

/**
 * Tails the log in order and applies it to the DuckDB tables, one transaction per batch with the
 * checkpoint in the same transaction: a crash never skips or double-applies an event. A change to
 * any table definition changes the fingerprint, and the tables are then rebuilt from the log.
 */
export class ProjectionRunner {
  private cursor: LogCursor = logStart;
  private readonly applied = new AppliedPositions();
  private readonly waiters = new Map<bigint, Waiter[]>();
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private failed: ProjectionFailure | null = null;
  /** After a failed batch, this many events are applied one at a time, to find the one that fails. */
  private isolating = 0;
  private held: { released: Promise<void>; release: () => void } | null = null;
  /** Increases with every applied batch; read caches key on it. */
  version = 0;
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

  constructor(
    private readonly duck: Duck,
    private readonly log: EventLog,
    private readonly projections: readonly TableProjection[],
    private readonly logger: Logger,
    private readonly options: ProjectionRunnerOptions = {},
    private readonly schemaProjections: readonly SchemaProjection[] = [],
  ) {
    this.fingerprint = crypto
      .createHash('sha256')
      .update(
        [
          ...projections.map((p) => `${createTableSql(p)}|${p.key}`),
          ...schemaProjections.map((p) => `${p.name}@${p.version}`),
          // Tables hold secrets masked: new masking rules must not leave old rows showing more.
          `secrets@${SECRET_RULES_VERSION}`,
        ].join('\n'),
      )
      .digest('hex')
      .slice(0, 16);
  }

  get position(): bigint {
    return this.cursor.position;
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
        void this.catchUp().catch(() => undefined);
      },
    };
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
      this.timer = setInterval(() => void this.catchUp().catch(() => undefined), pollMs);
      this.timer.unref();
    }
  }

  stop() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.held?.release();
    this.held = null;
    for (const [, waiters] of this.waiters) for (const w of waiters) w.resolve();
    this.waiters.clear();
  }

  /**
   * Resolves once this process's tables include the event at `position`. Rejects with
   * ProjectionStalled when the runner is stopped at an event it cannot apply, and with
   * ProjectionBehind when the event is not projected within `timeoutMs`.
   */
  waitFor(position: bigint, timeoutMs = this.options.waitTimeoutMs ?? 30_000): Promise<void> {
    if (this.applied.has(position)) return Promise.resolve();
    if (this.failed) return Promise.reject(new ProjectionStalled(position, this.failed));
    return new Promise<void>((resolve, reject) => {
      const forget = () => {
        clearTimeout(timeout);
        const list = this.waiters.get(position)?.filter((w) => w !== waiter) ?? [];
        if (list.length) this.waiters.set(position, list);
        else this.waiters.delete(position);
      };
      const timeout = setTimeout(() => {
        forget();
        reject(new ProjectionBehind(position, timeoutMs));
      }, timeoutMs);
      const waiter: Waiter = {
        resolve: () => {
          clearTimeout(timeout);
          resolve();
        },
        reject: (error) => {
          forget();
          reject(error);
        },
      };
      this.waiters.set(position, [...(this.waiters.get(position) ?? []), waiter]);
      void this.catchUp().catch(() => undefined);
    });
  }

  /**
   * Reads and applies everything new. Concurrent calls coalesce into one loop. While an event
   * fails, calls before its next attempt is due reject at once with the recorded failure.
   */
  catchUp(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const failed = this.failed;
    if (failed && Date.now() < failed.retryAt)
      return Promise.reject(new Error(`The read model is stopped: ${describeFailure(failed)}`));
    this.running = (async () => {
      try {
        do {
          this.again = false;
          for (;;) {
            if (this.stopped) return;
            const limit = this.isolating > 0 ? 1 : (this.options.batchSize ?? 1000);
            const { events, cursor } = await this.log.readAll(this.cursor, limit);
            if (events.length === 0) break;
            // Checked after the read: a read already under way when the runner was held may have
            // returned events appended after that, which must wait too.
            while (this.held) await this.held.released;
            if (this.stopped) return;
            try {
              await this.applyBatch(events, cursor);
            } catch (error) {
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
          }
        } while (this.again);
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
    const applyError = error instanceof ProjectionApplyError ? error : null;
    const event = applyError?.event ?? null;
    const position = event?.meta.position ?? null;
    const same = this.failed !== null && this.failed.position === position;
    const attempts = same ? this.failed!.attempts + 1 : 1;
    // A log that cannot be read (a database restarting) is retried sooner than an event that fails.
    const maxMs = Math.min(this.options.retryMaxMs ?? 60_000, applyError ? Infinity : 5_000);
    const delay = Math.min(maxMs, 1000 * 2 ** Math.min(attempts - 1, 20));
    const message = applyError ? applyError.message : error instanceof Error ? error.message : String(error);
    this.failed = {
      position,
      eventType: event?.type ?? null,
      projection: applyError?.projection ?? null,
      error: message.length > 2000 ? `${message.slice(0, 2000)}…` : message,
      since: same ? this.failed!.since : new Date().toISOString(),
      attempts,
      retryAt: Date.now() + delay,
    };
    this.logger.error(
      { err: applyError?.original ?? error, failure: this.failureForLog(this.failed) },
      'projection failed: retrying with back-off',
    );
    for (const [position, waiters] of [...this.waiters]) {
      for (const w of waiters) w.reject(new ProjectionStalled(position, this.failed));
    }
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (!this.stopped) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
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
    for (const p of this.projections) await this.duck.writer.run(`DROP TABLE IF EXISTS "${p.table}"`);
    for (const p of this.schemaProjections) await p.drop(this.duck.writer);
    await this.duck.writer.run(`DROP TABLE IF EXISTS ${CHECKPOINT_TABLE}`);
  }

  private async prepareTables(): Promise<void> {
    const w = this.duck.writer;
    await w.run(
      `CREATE TABLE IF NOT EXISTS ${CHECKPOINT_TABLE} (id INTEGER, position BIGINT, transaction_id VARCHAR, fingerprint VARCHAR)`,
    );
    const rows = (
      await w.runAndReadAll(`SELECT position, transaction_id, fingerprint FROM ${CHECKPOINT_TABLE}`)
    ).getRowObjectsJS() as { position: bigint; transaction_id: string | null; fingerprint: string }[];
    const stored = rows[0];
    if (stored && stored.fingerprint !== this.fingerprint) {
      this.logger.info('projection definitions changed: rebuilding from the log');
      await this.dropTables();
      return this.prepareTables();
    }
    for (const p of this.projections) await w.run(createTableSql(p));
    for (const p of this.schemaProjections) await p.prepare(w);
    if (!stored) {
      await w.run(`INSERT INTO ${CHECKPOINT_TABLE} VALUES (1, 0, NULL, ?)`, [this.fingerprint]);
      this.cursor = logStart;
    } else {
      this.cursor = { position: BigInt(stored.position), transactionId: stored.transaction_id };
    }
    // Everything before the checkpoint is in the tables already. On PostgreSQL a late commit can
    // sit below it, but it will still be read (the cursor orders by transaction) and recorded then.
    this.applied.reset(this.cursor.transactionId === null ? this.cursor.position + 1n : 0n);
  }

  private async applyBatch(events: readonly RecordedEvent[], cursor: LogCursor) {
    const w = this.duck.writer;
    const stores = this.projections.map((p) => new BatchRowStore(p, w));
    const byTable = new Map(this.projections.map((p, i) => [p.table, stores[i]!]));
    const lookup = (table: string) => {
      const store = byTable.get(table);
      if (!store) throw new Error(`No projection writes table ${table}`);
      return store;
    };
    this.dataEpoch++;
    await w.run('BEGIN TRANSACTION');
    try {
      const attributed = async (event: RecordedEvent | null, projection: string, work: () => unknown) => {
        try {
          await work();
        } catch (error) {
          throw new ProjectionApplyError(event, projection, error);
        }
      };
      for (const event of events) {
        for (let i = 0; i < this.projections.length; i++) {
          const p = this.projections[i]!;
          if (p.handles === 'all' || p.handles.includes(event.type))
            await attributed(event, p.table, () =>
              this.timed(p.table, () => p.apply(event, stores[i]!, lookup)),
            );
        }
        for (const p of this.schemaProjections)
          if (p.handles.includes(event.type))
            await attributed(event, p.name, () =>
              this.timed(schemaTimingKey(p, event), () => p.apply(event, w, this.log)),
            );
      }
      // Rows are written at the end of the batch: with one event, its failure is that event's.
      const only = events.length === 1 ? events[0]! : null;
      for (let i = 0; i < stores.length; i++)
        await attributed(only, this.projections[i]!.table, () =>
          this.timed(this.projections[i]!.table, () => stores[i]!.flush()),
        );
      await w.run(`UPDATE ${CHECKPOINT_TABLE} SET position = ?, transaction_id = ?`, [
        cursor.position,
        cursor.transactionId,
      ]);
      await w.run('COMMIT');
    } catch (error) {
      await w.run('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      this.dataEpoch++;
    }
    this.cursor = cursor;
    this.version++;
    for (const e of events) {
      this.applied.add(e.meta.position);
      const waiters = this.waiters.get(e.meta.position);
      if (waiters) {
        this.waiters.delete(e.meta.position);
        for (const w of waiters) w.resolve();
      }
    }
    for (const l of this.listeners) l(events);
  }
}
