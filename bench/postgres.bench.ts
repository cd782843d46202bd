// The PostgreSQL protocol front door against PostgreSQL's own server on this machine, with the same
// client (node-postgres) for both: SELECT 1 queries/s over 16 connections (simple query protocol),
// the same with a parameter (extended protocol: Parse/Bind/Describe/Execute/Sync per query), and
// rows/s reading a 1M-row result. The service runs in a child process (this file, started with
// MINDLEDGER_PG_BENCH_SERVER=1), as src/main.ts serves it: the users' door, authentication off.
import fs from 'node:fs';
import pg from 'pg';
import pino from 'pino';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { startPgServer } from '../src/pgwire';
import { sqlDoor } from '../src/users/sqlDoors';
import { fmt, inTurns, ratio, startServer, stopServer, tmpDir } from './support';

const POSTGRES: pg.ClientConfig = { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' };
const OURS_PORT = 47535;
const ROWS = 1_000_000;
const ROUNDS = 3;

/** The child: the app (rows up to 1M per answer) with the PostgreSQL server in front of its engine. */
const serve = async () => {
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'silent',
    SQL_ROW_LIMIT: String(ROWS),
    SQL_MAX_ANSWER_BYTES: String(1024 * 1024 * 1024),
  });
  const logger = pino({ level: 'silent' });
  const app = await createApp(config, { logger });
  const door = sqlDoor(app.services.users, app.sql, false, 'postgres');
  await startPgServer({ engine: door.engine, host: '127.0.0.1', port: OURS_PORT, logger });
  // An orderly exit on the bench's SIGTERM, so a --cpu-prof (BENCH_SERVER_NODE_ARGS) is written.
  process.on('SIGTERM', () => process.exit(0));
  process.send?.('ready');
};

const connect = async (config: pg.ClientConfig) => {
  const c = new pg.Client(config);
  await c.connect();
  return c;
};

/** Queries per second: `connections` clients each sending `sql` back to back for `seconds`. */
const queriesPerSecond = async (
  config: pg.ClientConfig,
  sql: string,
  values: unknown[] | undefined,
  connections: number,
  seconds: number,
) => {
  const clients = await Promise.all(Array.from({ length: connections }, () => connect(config)));
  const run = async (ms: number) => {
    const end = performance.now() + ms;
    let done = 0;
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() < end) {
          await c.query(sql, values);
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
  await Promise.all(clients.map((c) => c.end()));
  return qps;
};

/** Rows per second reading `sql` whole (node-postgres keeps the rows, the same for both); best of `runs`. */
const rowsPerSecond = async (config: pg.ClientConfig, sql: string, runs: number) => {
  const c = await connect(config);
  let best = 0;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const result = await c.query({ text: sql, rowMode: 'array' });
    const seconds = (performance.now() - t0) / 1000;
    if (result.rows.length !== ROWS)
      throw new Error(`${sql} answered ${result.rows.length} rows, not ${ROWS}`);
    best = Math.max(best, ROWS / seconds);
  }
  await c.end();
  return best;
};

export const benchPostgres = async (seconds: number) => {
  const dataDir = tmpDir('mindledger-bench-pg-');
  const child = await startServer('postgres.bench.ts', {
    MINDLEDGER_PG_BENCH_SERVER: '1',
    DATA_DIR: dataDir,
  });
  try {
    const ours: pg.ClientConfig = { host: '127.0.0.1', port: OURS_PORT, user: 'bench', database: 'mindsdb' };
    const simple = await inTurns(
      () => queriesPerSecond(POSTGRES, 'SELECT 1', undefined, 16, seconds),
      () => queriesPerSecond(ours, 'SELECT 1', undefined, 16, seconds),
      ROUNDS,
    );
    console.log(
      `PostgreSQL protocol SELECT 1 (simple query, 16 connections, median of ${ROUNDS} turns each): ${fmt(simple.ours)} q/s vs PostgreSQL ${fmt(simple.baseline)} q/s → ${fmt(ratio(simple.ours, simple.baseline), 2)} (goal ≥ 0.80, issue 41; turns ${simple.turns})`,
    );
    const extended = await inTurns(
      () => queriesPerSecond(POSTGRES, 'SELECT $1::int AS n', [1], 16, seconds),
      () => queriesPerSecond(ours, 'SELECT $1::int AS n', [1], 16, seconds),
      ROUNDS,
    );
    console.log(
      `PostgreSQL protocol SELECT $1 (extended protocol, 16 connections): ${fmt(extended.ours)} q/s vs PostgreSQL ${fmt(extended.baseline)} q/s → ${fmt(ratio(extended.ours, extended.baseline), 2)} (goal ≥ 0.80, issue 41; turns ${extended.turns})`,
    );
    const streamed = await inTurns(
      () => rowsPerSecond(POSTGRES, `SELECT generate_series(0, ${ROWS - 1})`, 3),
      () => rowsPerSecond(ours, `SELECT * FROM range(${ROWS})`, 3),
      ROUNDS,
    );
    console.log(
      `PostgreSQL protocol 1M-row result (best of 3 reads per turn, median of ${ROUNDS} turns): ${fmt(streamed.ours)} rows/s vs PostgreSQL ${fmt(streamed.baseline)} rows/s → ${fmt(ratio(streamed.ours, streamed.baseline), 2)} (goal ≥ 0.90, issue 41; turns ${streamed.turns})`,
    );
  } finally {
    await stopServer(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

if (process.env.MINDLEDGER_PG_BENCH_SERVER === '1' && require.main === module)
  serve().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
