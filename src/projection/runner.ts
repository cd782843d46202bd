import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { AnyRecordedEvent } from '../../events';
import type { Duck } from '../duckdb/database';
import { logStart, type EventLog, type LogCursor } from '../eventlog/types';
import { BatchRowStore, createTableSql } from './rows';
import type { SchemaProjection, TableProjection } from './types';

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
const schemaTimingKey = (p: SchemaProjection, event: AnyRecordedEvent) => {
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
};

/**
 * Tails the log in order and applies it to the DuckDB tables, one transaction per batch with the
 * checkpoint in the same transaction: a crash never skips or double-applies an event. A change to
 * any table definition changes the fingerprint, and the tables are then rebuilt from the log.
 */
export class ProjectionRunner {
  private cursor: LogCursor = logStart;
  private readonly applied = new AppliedPositions();
  private readonly waiters = new Map<bigint, (() => void)[]>();
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private lastError: unknown = null;
  /** Increases with every applied batch; read caches key on it. */
  version = 0;
  /**
   * Odd while a batch is being written, even when the tables are at rest; it moves on every batch.
   * A DuckDB prepared statement is planned against the statistics of the data it first saw (string
   * lengths, min/max), so a reader may reuse one only while this stays where it was at planning.
   */
  dataEpoch = 0;
  private readonly listeners: ((events: readonly AnyRecordedEvent[]) => void)[] = [];
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
        ].join('\n'),
      )
      .digest('hex')
      .slice(0, 16);
  }

  get position(): bigint {
    return this.cursor.position;
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
  onApplied(listener: (events: readonly AnyRecordedEvent[]) => void) {
    this.listeners.push(listener);
  }

  async start(): Promise<void> {
    await this.prepareTables();
    await this.catchUp();
    const pollMs = this.options.pollMs ?? 0;
    if (pollMs > 0) {
      this.timer = setInterval(() => void this.catchUp().catch(() => undefined), pollMs);
      this.timer.unref();
    }
  }

  stop() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const [, resolvers] of this.waiters) for (const r of resolvers) r();
    this.waiters.clear();
  }

  /** Resolves once this process's tables include the event at `position`. */
  waitFor(position: bigint): Promise<void> {
    if (this.applied.has(position)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timeout = setTimeout(() => {
        const list = this.waiters.get(position)?.filter((r) => r !== done) ?? [];
        if (list.length) this.waiters.set(position, list);
        else this.waiters.delete(position);
        reject(
          new Error(
            `Event ${position} is stored, but the read model has not caught up after ${this.options.waitTimeoutMs ?? 30_000} ms` +
              (this.lastError ? `: ${String(this.lastError)}` : ''),
          ),
        );
      }, this.options.waitTimeoutMs ?? 30_000);
      const done = () => {
        clearTimeout(timeout);
        resolve();
      };
      this.waiters.set(position, [...(this.waiters.get(position) ?? []), done]);
      void this.catchUp().catch(() => undefined);
    });
  }

  /** Reads and applies everything new. Concurrent calls coalesce into one loop. */
  catchUp(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          for (;;) {
            if (this.stopped) return;
            const { events, cursor } = await this.log.readAll(this.cursor, this.options.batchSize ?? 1000);
            if (events.length === 0) break;
            await this.applyBatch(events, cursor);
          }
        } while (this.again);
        this.lastError = null;
      } catch (error) {
        this.lastError = error;
        this.logger.error(
          { err: error, position: this.cursor.position.toString() },
          'projection batch failed',
        );
        throw error;
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** Throws the tables away and replays the whole log into them. */
  async rebuild(): Promise<{ events: number; ms: number }> {
    const started = Date.now();
    const from = this.cursor.position;
    await this.running?.catch(() => undefined);
    this.dataEpoch++;
    try {
      await this.dropTables();
      await this.prepareTables();
    } finally {
      this.dataEpoch++;
    }
    let count = 0;
    const listener = (events: readonly AnyRecordedEvent[]) => (count += events.length);
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

  private async applyBatch(events: readonly AnyRecordedEvent[], cursor: LogCursor) {
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
      for (const event of events) {
        for (let i = 0; i < this.projections.length; i++) {
          const p = this.projections[i]!;
          if (p.handles === 'all' || p.handles.includes(event.type))
            await this.timed(p.table, () => p.apply(event, stores[i]!, lookup));
        }
        for (const p of this.schemaProjections)
          if (p.handles.includes(event.type))
            await this.timed(schemaTimingKey(p, event), () => p.apply(event, w));
      }
      for (let i = 0; i < stores.length; i++)
        await this.timed(this.projections[i]!.table, () => stores[i]!.flush());
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
      const resolvers = this.waiters.get(e.meta.position);
      if (resolvers) {
        this.waiters.delete(e.meta.position);
        for (const r of resolvers) r();
      }
    }
    for (const l of this.listeners) l(events);
  }
}
