import type { Logger } from 'pino';
import type { RecordedEvent } from '../../events';
import type { Duck } from '../duckdb/database';
import { logStart, type EventLog } from '../eventlog/types';
import type { BatchWriter } from './batchWriter';
import { CHECKPOINT_TABLE, readModelFingerprint, storedCheckpoint } from './checkpoint';
import type { FailureKeeper } from './failureKeeper';
import { logMismatch, type LogPlace } from './logPlace';
import { createTableSql } from './rows';
import type { LogTail } from './tail';
import type { SchemaProjection, TableProjection } from './types';

/**
 * The read model's tables as a whole: what made them (their fingerprint: every definition, the
 * secret rules, the events passed over), made at start, dropped and rebuilt from the log when the
 * fingerprint changed or when they do not belong to the log (it no longer holds the event they
 * end with), and on demand.
 */
export class ReadModelTables {
  readonly fingerprint: string;
  /** Why the tables were last dropped and rebuilt at start, if they were (GET /api/status). */
  private rebuiltBecause: string | null = null;
  private rebuildingForLog: Promise<void> | null = null;

  constructor(
    private readonly deps: {
      duck: Pick<Duck, 'writer'>;
      log: EventLog;
      logger: Logger;
      projections: readonly TableProjection[];
      schemaProjections: readonly SchemaProjection[];
      skipped: ReadonlySet<string>;
      place: LogPlace;
      tail: Pick<LogTail, 'settled' | 'catchUp' | 'stopped'>;
      writer: Pick<BatchWriter, 'forget' | 'whileTablesChange'>;
      failures: Pick<FailureKeeper, 'retryNow'>;
      /** The tables are dropped: every table's version moves. */
      dropped: () => void;
      /** Calls `listener` after every applied batch until the returned function is called. */
      listen: (listener: (events: readonly RecordedEvent[]) => void) => () => void;
    },
  ) {
    this.fingerprint = readModelFingerprint(deps.projections, deps.schemaProjections, [...deps.skipped]);
  }

  /** Why the tables were last rebuilt for not belonging to the log, if they were. */
  get rebuildReason(): string | null {
    return this.rebuiltBecause;
  }

  /** True while the tables are rebuilt because they did not belong to the log (not ready meanwhile). */
  get rebuildingForTheLog(): boolean {
    return this.rebuildingForLog !== null;
  }

  /**
   * Makes the tables and the checkpoint, unless there; drops them first when they were made by
   * other definitions or from another log. The cursor then stands at the checkpoint.
   */
  async prepare(): Promise<void> {
    const { duck, log, logger, place } = this.deps;
    const w = duck.writer;
    await w.run(
      `CREATE TABLE IF NOT EXISTS ${CHECKPOINT_TABLE} (id INTEGER, position BIGINT, transaction_id VARCHAR, fingerprint VARCHAR)`,
    );
    // Read models written before it was kept have no id of the last event applied.
    await w.run(`ALTER TABLE ${CHECKPOINT_TABLE} ADD COLUMN IF NOT EXISTS event_id VARCHAR`);
    const stored = await storedCheckpoint(w);
    if (stored && stored.fingerprint !== this.fingerprint) {
      logger.info('projection definitions changed: rebuilding from the log');
      await this.drop();
      return this.prepare();
    }
    if (stored) {
      const mismatch = await logMismatch(log, BigInt(stored.position), stored.event_id);
      if (mismatch) {
        this.rebuiltBecause = mismatch;
        logger.warn(
          { reason: mismatch },
          'the read model does not belong to this log: rebuilding from the log',
        );
        await this.drop();
        return this.prepare();
      }
    }
    // One call (DuckDB runs a text's statements in order) rather than one per table: a start
    // made some sixty trips to DuckDB's thread here.
    if (this.deps.projections.length) await w.run(this.deps.projections.map(createTableSql).join(';\n'));
    for (const p of this.deps.schemaProjections) await p.prepare(w);
    if (!stored) {
      await w.run(`INSERT INTO ${CHECKPOINT_TABLE} VALUES (1, 0, NULL, ?, NULL)`, [this.fingerprint]);
      place.standAt(logStart, null);
    } else {
      place.standAt(
        { position: BigInt(stored.position), transactionId: stored.transaction_id },
        stored.event_id,
      );
    }
    // Everything before the checkpoint is in the tables already. On PostgreSQL a late commit can
    // sit below its position, but it will still be read (the cursor orders by transaction) and
    // recorded then: the log says below which position nothing is left to read.
    place.applied.reset(await log.unreadFloor(place.cursor));
  }

  /** Drops every table and the checkpoint. */
  async drop() {
    this.deps.writer.forget();
    this.deps.dropped();
    const w = this.deps.duck.writer;
    for (const p of this.deps.projections) await w.run(`DROP TABLE IF EXISTS "${p.table}"`);
    for (const p of this.deps.schemaProjections) await p.drop(w);
    await w.run(`DROP TABLE IF EXISTS ${CHECKPOINT_TABLE}`);
  }

  /** See `ProjectionRunner.verifyBelongsToLog`. */
  async verifyBelongsToLog(): Promise<string | null> {
    if (this.rebuildingForLog) return this.rebuiltBecause;
    const mismatch = await this.deps.place.mismatchWith(this.deps.log);
    if (mismatch && !this.deps.tail.stopped && !this.rebuildingForLog) {
      this.rebuiltBecause = mismatch;
      this.deps.logger.warn(
        { reason: mismatch },
        'the read model does not belong to this log: rebuilding from the log',
      );
      this.rebuildingForLog = this.rebuild()
        .then(() => undefined)
        .catch((error: unknown) => this.deps.logger.error({ err: error }, 'rebuilding the read model failed'))
        .finally(() => (this.rebuildingForLog = null));
    }
    return mismatch;
  }

  /** Throws the tables away and replays the whole log into them. */
  async rebuild(): Promise<{ events: number; ms: number }> {
    const started = Date.now();
    const from = this.deps.place.cursor.position;
    await this.deps.tail.settled();
    this.deps.failures.retryNow();
    await this.deps.writer.whileTablesChange(async () => {
      await this.drop();
      await this.prepare();
    });
    let count = 0;
    const stopListening = this.deps.listen((events) => (count += events.length));
    try {
      await this.deps.tail.catchUp();
    } finally {
      stopListening();
    }
    this.deps.logger.info({ events: count, previousPosition: from.toString() }, 'projections rebuilt');
    return { events: count, ms: Date.now() - started };
  }
}
