// The MySQL protocol front door against MariaDB's own server on this machine, with the same client
// (mysql2) for both: SELECT 1 queries/s over 16 connections, and rows/s reading a 1M-row result.
// The service runs in a child process (this file, started with MINDLEDGER_MYSQL_BENCH_SERVER=1).
// The service's door streams SELECTs from DuckDB (src/sql/selectStream.ts); beside it, the same
// engine answering whole (execute only), and DuckDB's chunks converted by its own JSON converter
// straight to the wire (no sandbox, no limits: what the protocol code carries from DuckDB's own reading).
import fs from 'node:fs';
import { JsonDuckDBValueConverter, type DuckDBResult } from '@duckdb/node-api';
import mysql from 'mysql2';
import pino from 'pino';
import { createApp, type RunningApp } from '../src/app';
import { loadConfig } from '../src/config';
import { startMysqlServer, type SqlEngine } from '../src/mysql';
import { sqlDoor } from '../src/users/sqlDoors';
import { fmt, inTurns, ratio, startServer, stopServer, tmpDir } from './support';

const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root' };
const OURS_PORT = 47435;
const CHUNKS_PORT = 47436;
const WHOLE_PORT = 47437;
const ROWS = 1_000_000;
const ROUNDS = 3;

/**
 * DuckDB's chunks converted by its own JSON converter straight to the wire (once the protocol's
 * ceiling; the service's own reading of plain columns is faster now), on one pooled reader held while the
 * client reads. The engine's sandbox, name resolution and value conversion are skipped: this
 * measures what the protocol code can carry, never serves queries.
 */
const duckdbChunks =
  (app: RunningApp): NonNullable<SqlEngine['stream']> =>
  async (query, context) => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const result = await new Promise<DuckDBResult>((resolve, reject) => {
      app.ctx.duck
        .withReader(async (c) => {
          resolve(await c.stream(query));
          await held;
        })
        .catch(reject);
    });
    async function* rows() {
      try {
        for (;;) {
          const chunk = await result.fetchChunk();
          if (!chunk || chunk.rowCount === 0) return;
          yield chunk.convertRows(JsonDuckDBValueConverter);
        }
      } finally {
        release();
      }
    }
    return {
      type: 'table',
      column_names: result.columnNames(),
      column_types: result.columnTypes().map(String),
      rows: rows(),
      truncated: () => false,
      context,
    };
  };

/** The child: the app (rows up to 1M per answer) with the MySQL server in front of its engine. */
const serve = async () => {
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'silent',
    SQL_ROW_LIMIT: String(ROWS),
    SQL_MAX_ANSWER_BYTES: String(1024 * 1024 * 1024),
  });
  const logger = pino({ level: 'silent' });
  const app = await createApp(config, { logger });
  // As src/main.ts serves it: the users' door in front of the SQL engine (authentication off).
  const door = sqlDoor(app.services.users, app.sql, false);
  await startMysqlServer({ engine: door.engine, host: '127.0.0.1', port: OURS_PORT, logger });
  const whole: SqlEngine = { execute: door.engine.execute };
  await startMysqlServer({ engine: whole, host: '127.0.0.1', port: WHOLE_PORT, logger });
  await startMysqlServer({
    engine: { ...whole, stream: duckdbChunks(app) },
    host: '127.0.0.1',
    port: CHUNKS_PORT,
    logger,
  });
  // An orderly exit on the bench's SIGTERM, so a --cpu-prof (BENCH_SERVER_NODE_ARGS) is written.
  process.on('SIGTERM', () => process.exit(0));
  process.send?.('ready');
};

type Target = { name: string; options: mysql.ConnectionOptions };

const connect = (options: mysql.ConnectionOptions) =>
  new Promise<mysql.Connection>((resolve, reject) => {
    const c = mysql.createConnection(options);
    c.connect((err) => (err ? reject(err) : resolve(c)));
  });

const query = (c: mysql.Connection, sql: string) =>
  new Promise<void>((resolve, reject) => c.query(sql, (err) => (err ? reject(err) : resolve())));

/** Queries per second: `connections` clients each sending `sql` back to back for `seconds`. */
const queriesPerSecond = async (target: Target, sql: string, connections: number, seconds: number) => {
  const clients = await Promise.all(Array.from({ length: connections }, () => connect(target.options)));
  const run = async (ms: number) => {
    const end = performance.now() + ms;
    let done = 0;
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() < end) {
          await query(c, sql);
          done++;
        }
      }),
    );
    return done;
  };
  await run(500);
  const t0 = performance.now();
  const done = await run(seconds * 1000);
  const qps = done / ((performance.now() - t0) / 1000);
  for (const c of clients) c.destroy();
  return qps;
};

/** Rows per second reading `sql` whole (rows counted as they arrive, never kept); best of `runs`. */
const rowsPerSecond = async (target: Target, sql: string, runs: number) => {
  const c = await connect(target.options);
  let best = 0;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const rows = await new Promise<number>((resolve, reject) => {
      let n = 0;
      c.query({ sql, rowsAsArray: true })
        .on('result', () => n++)
        .on('error', reject)
        .on('end', () => resolve(n));
    });
    const seconds = (performance.now() - t0) / 1000;
    if (rows !== ROWS) throw new Error(`${target.name} answered ${rows} rows, not ${ROWS}`);
    best = Math.max(best, rows / seconds);
  }
  c.destroy();
  return best;
};

export const benchMysql = async (seconds: number) => {
  const scratch = `mindledger_bench_${process.pid}`;
  const admin = await connect(MARIADB);
  await query(admin, `CREATE DATABASE ${scratch}`);
  const dataDir = tmpDir('mindledger-bench-mysql-');
  const child = await startServer('mysql.bench.ts', {
    MINDLEDGER_MYSQL_BENCH_SERVER: '1',
    DATA_DIR: dataDir,
  });
  try {
    const mariadb: Target = { name: 'MariaDB', options: { ...MARIADB, database: scratch } };
    const ours: Target = {
      name: 'mindledger',
      options: { host: '127.0.0.1', port: OURS_PORT, user: 'bench' },
    };
    const chunks: Target = { name: 'DuckDB chunks', options: { ...ours.options, port: CHUNKS_PORT } };
    const wholeAnswers: Target = { name: 'whole answers', options: { ...ours.options, port: WHOLE_PORT } };

    const q = await inTurns(
      () => queriesPerSecond(mariadb, 'SELECT 1', 16, seconds),
      () => queriesPerSecond(ours, 'SELECT 1', 16, seconds),
      ROUNDS,
    );
    console.log(
      `MySQL protocol SELECT 1 (16 connections, median of ${ROUNDS} turns each): ${fmt(q.ours)} q/s vs MariaDB ${fmt(q.baseline)} q/s → ${fmt(ratio(q.ours, q.baseline), 2)} (goal ≥ 1.0, issue 41; turns ${q.turns})`,
    );

    // MariaDB's Sequence engine makes the rows as it sends them; DuckDB's range() likewise.
    const streamed = await inTurns(
      () => rowsPerSecond(mariadb, `SELECT seq FROM seq_0_to_${ROWS - 1}`, 3),
      () => rowsPerSecond(ours, `SELECT * FROM range(${ROWS})`, 3),
      ROUNDS,
    );
    const rows = {
      mariadb: streamed.baseline,
      ours: streamed.ours,
      whole: await rowsPerSecond(wholeAnswers, `SELECT * FROM range(${ROWS})`, 3),
      chunks: await rowsPerSecond(chunks, `SELECT * FROM range(${ROWS})`, 3),
    };
    console.log(
      `MySQL protocol 1M-row result, streamed by the service (best of 3 reads per turn, median of ${ROUNDS} turns): ${fmt(rows.ours)} rows/s vs MariaDB ${fmt(rows.mariadb)} rows/s → ${fmt(ratio(rows.ours, rows.mariadb), 2)} (goal ≥ 0.9, issue 41; turns ${streamed.turns})`,
    );
    console.log(
      `  the same engine answering whole: ${fmt(rows.whole)} rows/s → ${fmt(ratio(rows.whole, rows.mariadb), 2)}; DuckDB's chunks by its own converter to the wire, no engine: ${fmt(rows.chunks)} rows/s → ${fmt(ratio(rows.chunks, rows.mariadb), 2)}`,
    );
  } finally {
    await stopServer(child);
    await query(admin, `DROP DATABASE ${scratch}`);
    admin.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

if (process.env.MINDLEDGER_MYSQL_BENCH_SERVER === '1' && require.main === module)
  serve().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
