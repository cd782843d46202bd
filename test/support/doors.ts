/**
 * Both wire doors in front of one test app, as src/main.ts opens them (authentication off: any
 * user), with a mysql2 and a node-postgres client connected; and the reading of a door's cells as
 * HTTP renders them, for specs that hold the doors to HTTP.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import pino from 'pino';
import { startMysqlServer } from '../../src/mysql';
import { startPgServer } from '../../src/pgwire';
import { sqlDoor } from '../../src/users/sqlDoors';
import type { TestApp } from './app';

/** Drivers' result parsing off: every cell as the text (or binary value) the door sent. */
export const RAW_PG_TYPES = {
  getTypeParser: () => (value: string) => value,
} as unknown as pg.CustomTypesConfig;

export const isIntegerType = (t: string) => /^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$/.test(t);

/** A door's cell (the drivers' own parsing off or undone) as HTTP renders a cell of `type`. */
export const asHttpCell = (type: string, v: unknown): unknown => {
  if (v === null || v === undefined) return null;
  if (isIntegerType(type)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : String(v);
  }
  if (/^(DOUBLE|FLOAT|REAL)$/.test(type) || type.startsWith('DECIMAL')) {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  if (type === 'BOOLEAN') return v === true || v === 1 || v === '1' || v === 't' || v === 'true';
  return Buffer.isBuffer(v) ? v.toString('utf8') : v;
};

export type Doors = Awaited<ReturnType<typeof startDoors>>;

export const startDoors = async (t: TestApp, mysqlOptions: Partial<mysql.ConnectionOptions> = {}) => {
  const silent = pino({ level: 'silent' });
  const mysqlDoor = sqlDoor(t.running.services.users, t.running.sql, false, 'mysql');
  const mysqlServer = await startMysqlServer({
    engine: mysqlDoor.engine,
    auth: mysqlDoor.auth,
    host: '127.0.0.1',
    port: 0,
    logger: silent,
  });
  const pgDoor = sqlDoor(t.running.services.users, t.running.sql, false, 'postgres');
  const pgServer = await startPgServer({
    engine: pgDoor.engine,
    auth: pgDoor.auth,
    host: '127.0.0.1',
    port: 0,
    logger: silent,
  });
  const my = await mysql.createConnection({
    host: '127.0.0.1',
    port: mysqlServer.port,
    user: 'analyst',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    ...mysqlOptions,
  });
  const pgc = new pg.Client({
    host: '127.0.0.1',
    port: pgServer.port,
    user: 'analyst',
    database: 'mindsdb',
    types: RAW_PG_TYPES,
  });
  pgc.on('error', () => undefined);
  await pgc.connect();
  return {
    my,
    pgc,
    close: async () => {
      my.destroy();
      await pgc.end().catch(() => undefined);
      await mysqlServer.close(0);
      await pgServer.close(0);
    },
  };
};
