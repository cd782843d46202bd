import crypto from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { freshPostgresDatabase } from './postgres';

/** Connection parameters of the PostgreSQL every machine and CI has (trust auth: any password works). */
export const postgresParameters = (extra: Record<string, unknown> = {}) => ({
  host: '127.0.0.1',
  port: 5432,
  user: 'postgres',
  password: 'any-password-trust-auth',
  database: 'postgres',
  ...extra,
});

/** The MariaDB every machine and CI has (root, no password). */
export const mariadbParameters = (extra: Record<string, unknown> = {}) => ({
  host: '127.0.0.1',
  port: 3306,
  user: 'root',
  database: 'test',
  ...extra,
});

/** `big`: 50,000 rows of 1,024 characters (51.2 MB of text), in each engine's SQL: a table too large to read whole. */
export const BIG_TABLE = {
  text: 50_000 * 1024,
  postgres: [
    'CREATE TABLE big AS SELECT g AS id, repeat(md5(g::text), 32) AS name FROM generate_series(1, 50000) g',
  ],
  mariadb: [
    'CREATE TABLE big (id int PRIMARY KEY, name text)',
    'INSERT INTO big SELECT seq, REPEAT(MD5(seq), 32) FROM seq_1_to_50000',
  ],
} as const;

/** A fresh PostgreSQL database (from the specs' pool) with some tables, given back afterwards. */
export const freshPostgresData = async (setup: string[]) => {
  const database = await freshPostgresDatabase();
  const c = new pg.Client({ connectionString: database.url });
  try {
    await c.connect();
    for (const statement of setup) await c.query(statement);
  } catch (error) {
    await c.end().catch(() => undefined);
    await database.drop();
    throw error;
  }
  await c.end();
  const { name, drop } = database;
  return { name, parameters: postgresParameters({ database: name }), drop };
};

/** A fresh MariaDB database with some tables, dropped afterwards. */
export const freshMariaData = async (setup: string[]) => {
  const name = `ext_${crypto.randomBytes(5).toString('hex')}`;
  const c = await mysql.createConnection({
    host: '127.0.0.1',
    port: 3306,
    user: 'root',
    multipleStatements: false,
  });
  await c.query(`CREATE DATABASE ${name}`);
  await c.query(`USE ${name}`);
  for (const statement of setup) await c.query(statement);
  await c.end();
  return {
    name,
    parameters: mariadbParameters({ database: name }),
    drop: async () => {
      const a = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
      await a.query(`DROP DATABASE IF EXISTS ${name}`);
      await a.end();
    },
  };
};

export type ExternalEngine = 'postgres' | 'mysql';

/**
 * The rows of a query run on one of the machine's databases itself (not through the service), each
 * row an array. BIGINT (what integers are written as) reads as a number on both, as MariaDB's driver
 * reads it.
 */
export const rowsInExternal = async (
  engine: ExternalEngine,
  database: string,
  sql: string,
): Promise<unknown[][]> => {
  if (engine === 'postgres') {
    const c = new pg.Client({
      ...postgresParameters({ database }),
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === 20
            ? (v: string) => Number(v)
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    await c.connect();
    try {
      return (await c.query({ text: sql, rowMode: 'array' })).rows as unknown[][];
    } finally {
      await c.end();
    }
  }
  const c = await mysql.createConnection(mariadbParameters({ database }));
  try {
    const [rows] = await c.query({ sql, rowsAsArray: true });
    return rows as unknown[][];
  } finally {
    await c.end();
  }
};
