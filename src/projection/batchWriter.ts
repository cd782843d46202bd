import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from 'pino';
import type { RecordedEvent } from '../../events';
import type { Duck } from '../duckdb/database';
import { serialQueue } from '../eventlog/queue';
import type { EventLog, LogCursor } from '../eventlog/types';
import { applyEvents } from './batch';
import { checkpointUpdateSql, storedCheckpoint } from './checkpoint';
import { CommittedRows } from './committedRows';
import type { LogPlace } from './logPlace';
import { MemoryKeeper } from './memoryKeeper';
import type { BatchRowStore } from './rows';
import type { SchemaProjection, TableProjection } from './types';

/** A committed batch: its events, where the cursor stands after them, the row stores it wrote. */
type CommittedBatch = (
  events: readonly RecordedEvent[],
  cursor: LogCursor,
  written: readonly BatchRowStore[],
) => void;

/**
 * Writes batches of events into the tables on the writer connection: one transaction per batch,
 * its rows and the checkpoint committed together, so a crash never skips or double-applies an
 * event. Work between batches takes turns with them. A batch whose commit reported an error is
 * looked at again before the next (`settle`): it may have committed all the same.
 */
export class BatchWriter {
  /** Whose turn it is on the writer connection: a batch, or work between batches. */
  private readonly turn = serialQueue();
  private readonly memory: MemoryKeeper;
  /** Whether a failed batch's transaction could not be rolled back yet (see `MemoryKeeper.rollBack`). */
  private openAfterFailure = false;
  /** The last batch, when its call to commit reported an error: it may have committed (see `settle`). */
  private unsettled: {
    events: readonly RecordedEvent[];
    cursor: LogCursor;
    stores: readonly BatchRowStore[];
  } | null = null;
  /** Rows written by this runner's committed batches, read back without a query. */
  private readonly committed = new CommittedRows();
  /** Milliseconds spent per table since start (uploaded files' tables each on their own line). */
  private readonly spent = new Map<string, number>();
  /** See `ProjectionRunner.dataEpoch`. */
  private epoch = 0;

  constructor(
    private readonly deps: {
      duck: Pick<Duck, 'writer' | 'makeRoomForWriter'>;
      log: EventLog;
      logger: Logger;
      projections: readonly TableProjection[];
      schemaProjections: readonly SchemaProjection[];
      /** `<position>:<projection>` pairs passed over (PROJECTION_SKIP). */
      skipped: ReadonlySet<string>;
      place: Pick<LogPlace, 'eventIdAt' | 'cursor'>;
      stopped: () => boolean;
      /** What follows a committed batch (the cursor, the versions, the waiters). */
      committed: CommittedBatch;
    },
  ) {
    this.memory = new MemoryKeeper(deps.duck, deps.logger, (work) => this.turn(work), deps.stopped);
  }

  /** Odd while a batch is being written, even at rest (see `ProjectionRunner.dataEpoch`). */
  get dataEpoch(): number {
    return this.epoch;
  }

  /**
   * Writes a batch, in its turn, trying it again while it fails for want of DuckDB's memory. False
   * when the tables no longer stand where the batch was read from (`from`, the cursor then): a
   * rebuild dropped and made them meanwhile, so those events are not the next ones for them, and
   * nothing is written (the tail reads again from where the tables stand).
   */
  write(events: readonly RecordedEvent[], cursor: LogCursor, from: LogCursor): Promise<boolean> {
    return this.memory.writeMakingRoom(events.length, () => this.writeBatch(events, cursor, from));
  }

  /** See `ProjectionRunner.betweenBatches`. */
  betweenBatches<T>(work: () => Promise<T>): Promise<T> {
    return this.turn(work);
  }

  /**
   * Runs `work` (dropping and making the tables) in its turn, with the data epoch odd, as a batch
   * does: a batch under way finishes on the old tables first, and none writes while they change.
   */
  whileTablesChange(work: () => Promise<void>): Promise<void> {
    return this.turn(async () => {
      this.epoch++;
      try {
        await work();
      } finally {
        this.epoch++;
      }
    });
  }

  /** The tables are dropped: rows remembered and a batch left unsettled belong to them. */
  forget() {
    this.committed.clear();
    this.unsettled = null;
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
    const stored = await storedCheckpoint(w);
    const committed =
      stored !== undefined &&
      BigInt(stored.position) === unsettled.cursor.position &&
      stored.transaction_id === unsettled.cursor.transactionId;
    this.unsettled = null;
    if (!committed) return events;
    this.deps.logger.warn(
      { position: unsettled.cursor.position.toString(), events: unsettled.events.length },
      'a batch DuckDB reported failed had committed: it counts as applied, and is not written again',
    );
    this.deps.committed(unsettled.events, unsettled.cursor, unsettled.stores);
    const done = new Set(unsettled.events.map((e) => e.meta.position));
    return events.filter((e) => !done.has(e.meta.position));
  }

  private async writeBatch(
    read: readonly RecordedEvent[],
    cursor: LogCursor,
    from: LogCursor,
  ): Promise<boolean> {
    // Before `settle`, which may move the cursor past a batch that committed after all (the same
    // read then holds its events again): here only a rebuild has moved it.
    if (from !== this.deps.place.cursor) return false;
    const w = this.deps.duck.writer;
    if (this.openAfterFailure) this.openAfterFailure = await this.memory.rollBack(w);
    const events = await this.settle(w, read);
    // Every event read was in the batch that committed after all: the cursor stands past them.
    if (events.length === 0) return true;
    this.epoch++;
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
        log: this.deps.log,
        projections: this.deps.projections,
        schemaProjections: this.deps.schemaProjections,
        timed: this.timed,
        transaction,
        committed: this.committed,
        skip: this.deps.skipped,
      });
      const checkpoint = checkpointUpdateSql(cursor, this.deps.place.eventIdAt(events, cursor));
      // A small batch is one call: its rows, the checkpoint and the commit, run off the main thread.
      const rest = [...batch.statements, checkpoint, 'COMMIT'];
      await this.memory.beforeCommit(w);
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
      if (begun) this.openAfterFailure = await this.memory.rollBack(w);
      this.committed.clear();
      // The error may have come after the commit: the next batch looks first (`settle`).
      if (committing) this.unsettled = { events, cursor, stores: committing };
      throw error;
    } finally {
      this.epoch++;
    }
    this.deps.committed(events, cursor, written);
    return true;
  }
}
