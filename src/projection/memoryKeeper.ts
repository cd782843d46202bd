import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from 'pino';
import type { Duck } from '../duckdb/database';
import { isMemoryShortageMessage } from '../duckdb/errors';
import { messageOf } from '../shared/errors';

/** How many times a batch that met DuckDB's memory limit is written before it counts as failed. */
const MEMORY_SHORTAGE_ATTEMPTS = 5;

/**
 * Keeps room under DuckDB's memory limit for the read model's writer: heavy SQL queries hold
 * memory, and a batch, its commit or its rollback that meets the limit fails, or worse (a rollback
 * that fails leaves the transaction open and aborted; DuckDB may invalidate the whole database).
 */
export class MemoryKeeper {
  constructor(
    private readonly duck: Pick<Duck, 'writer' | 'makeRoomForWriter'>,
    private readonly logger: Logger,
    /** Runs work in its turn on the writer connection. */
    private readonly onWriterTurn: <T>(work: () => Promise<T>) => Promise<T>,
    private readonly stopped: () => boolean,
  ) {}

  /**
   * Writes a batch (`write`, in its turn); one that failed for want of DuckDB's memory (heavy SQL
   * queries held it) is tried again, up to MEMORY_SHORTAGE_ATTEMPTS times, once the queries holding
   * memory are stopped: the batch is not at fault, and failing it would answer every waiting write 503.
   */
  async writeMakingRoom<T>(events: number, write: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.onWriterTurn(write);
      } catch (error) {
        const message = messageOf(error);
        if (!isMemoryShortageMessage(message) || attempt >= MEMORY_SHORTAGE_ATTEMPTS || this.stopped())
          throw error;
        this.logger.warn(
          { attempt, events, error: message.split('\n')[0] },
          "a batch met DuckDB's memory limit: stopping heavy SQL queries and trying it again",
        );
        // Making room can meet the shortage too (its look at DuckDB's memory): the next try says.
        await this.onWriterTurn(() =>
          this.duck.makeRoomForWriter(this.duck.writer, { shortage: true }).catch(() => undefined),
        );
      }
    }
  }

  /** Before a commit: it must not meet DuckDB's memory limit, so heavy SQL queries stop first. */
  beforeCommit(w: DuckDBConnection): Promise<void> {
    return this.duck.makeRoomForWriter(w);
  }

  /**
   * Ends the failed batch's transaction; whether it is still open after. A ROLLBACK can meet
   * DuckDB's memory limit too: it was then left open, aborted, and every later batch failed on it
   * ("Current transaction is aborted") until a restart. So room is made and it is tried again; one
   * that still fails is tried again before the next batch begins.
   */
  async rollBack(w: DuckDBConnection): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await w.run('ROLLBACK');
        return false;
      } catch (error) {
        const message = messageOf(error);
        if (/no transaction is active/.test(message)) return false;
        if (attempt >= MEMORY_SHORTAGE_ATTEMPTS || !isMemoryShortageMessage(message)) {
          this.logger.error({ err: error }, "the read model's writer could not roll a failed batch back");
          return true;
        }
        await this.duck.makeRoomForWriter(w, { shortage: true }).catch(() => undefined);
      }
    }
  }
}
