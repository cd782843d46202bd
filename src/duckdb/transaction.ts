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
