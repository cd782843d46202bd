import pg from 'pg';
import { freshPostgresDatabase, POSTGRES_ADMIN_URL } from '../test/support/postgres';
import { tmpDir } from './support';

/** Where a bench's log is: a SQLite file in its data directory, or a PostgreSQL database of its own. */
export type LogStore = 'sqlite' | 'postgres';
export const LOG_STORES: readonly LogStore[] = ['sqlite', 'postgres'];

/** The stores a comma-separated list names (`sqlite,postgres`); every store when it is unset. */
export const logStoresNamed = (list: string | undefined): LogStore[] => {
  if (list === undefined || list.trim() === '') return [...LOG_STORES];
  return list.split(',').map((name) => {
    const store = LOG_STORES.find((s) => s === name.trim());
    if (!store) throw new Error(`Unknown log store ${name}; known: ${LOG_STORES.join(', ')}`);
    return store;
  });
};

/**
 * Runs `work` with the environment of a service whose data directory is new and whose log is on
 * `store`: on PostgreSQL a fresh database (test/support/postgres.ts), dropped afterwards, not given
 * back to the tests' pool: a log of millions of events is not worth keeping emptied.
 */
export const withLogStore = async <T>(
  store: LogStore,
  prefix: string,
  work: (env: Record<string, string>) => Promise<T>,
): Promise<T> => {
  const dataDir = tmpDir(`${prefix}${store}-`);
  if (store === 'sqlite') return work({ DATA_DIR: dataDir });
  const db = await freshPostgresDatabase();
  try {
    return await work({ DATA_DIR: dataDir, EVENT_STORE_URL: db.url });
  } finally {
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }
};
