import type { DuckDBConnection } from '@duckdb/node-api';

/** Runs `work` in one transaction on `c`: committed when it ends, rolled back when it throws. */
export const inTransaction = async <T>(c: DuckDBConnection, work: () => Promise<T>): Promise<T> => {
  await c.run('BEGIN TRANSACTION');
  try {
    const result = await work();
    await c.run('COMMIT');
    return result;
  } catch (error) {
    await c.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
};

/** Runs the reads of `work` on one snapshot of `c`'s database (a transaction ended when they end). */
export const inSnapshot = async <T>(c: DuckDBConnection, work: () => Promise<T>): Promise<T> => {
  await c.run('BEGIN TRANSACTION');
  try {
    return await work();
  } finally {
    await c.run('COMMIT').catch(() => undefined);
  }
};
