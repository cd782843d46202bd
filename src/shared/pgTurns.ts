import type pg from 'pg';

/**
 * Runs `work` in one transaction holding a transaction-scoped advisory lock on `key`. Schema
 * changes (`CREATE … IF NOT EXISTS`, `CREATE OR REPLACE`) are not safe against themselves in
 * PostgreSQL: processes starting together on a fresh database both find nothing and one fails on a
 * catalog's unique index. Under the lock they take turns; the lock ends with the transaction.
 */
export const inSchemaTurn = async (
  pool: pg.Pool,
  key: string,
  work: (client: pg.PoolClient) => Promise<void>,
): Promise<void> => {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
    await work(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
};
