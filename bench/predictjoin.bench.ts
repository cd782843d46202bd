import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { readSharedCsv, sharedData } from '../test/support/data';
import { freshPostgresData } from '../test/support/external';
import { fmt, percentile, ratio, startServer, stopServer, tmpDir } from './support';

const ROWS = 100_000;
const COLUMNS = [
  ['number_of_rooms', 'int'],
  ['number_of_bathrooms', 'int'],
  ['sqft', 'int'],
  ['location', 'text'],
  ['days_on_market', 'int'],
  ['initial_price', 'int'],
  ['neighborhood', 'text'],
  ['rental_price', 'double precision'],
] as const;

const post = async (url: string, body: unknown) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.json() as Promise<{ type: string; data?: unknown[][]; error_message?: string }>;
};

/** The median of three runs of a query, checked by `check` each time. */
const timed = async (run: () => Promise<unknown[][] | undefined>, check: (data: unknown[][]) => void) => {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const data = await run();
    runs.push(performance.now() - t0);
    if (!data) throw new Error('no rows');
    check(data);
  }
  return percentile(runs, 50);
};

/**
 * Batch prediction over 100,000 rows held in a PostgreSQL table (registered with CREATE DATABASE,
 * fetched into DuckDB, predicted there) against the same rows uploaded as a file; and a filtered,
 * limited batch, whose filters and LIMIT go to PostgreSQL with the fetch.
 */
export const benchPredictJoin = async () => {
  const rentals = (await readSharedCsv('home_rentals.csv')).filter((r) => /^\d+$/.test(r.sqft!));
  const rows = Array.from({ length: ROWS }, (_, i) => rentals[i % rentals.length]!);

  // The same rows as a PostgreSQL table and as a CSV file.
  const db = await freshPostgresData([
    `CREATE TABLE rentals (${COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ')})`,
  ]);
  const client = new pg.Client({ ...db.parameters });
  await client.connect();
  for (let at = 0; at < rows.length; at += 20_000) {
    const chunk = rows.slice(at, at + 20_000);
    await client.query(
      `INSERT INTO rentals SELECT * FROM unnest(${COLUMNS.map(([, type], i) => `$${i + 1}::${type === 'text' ? 'text' : type}[]`).join(', ')})`,
      COLUMNS.map(([name]) => chunk.map((r) => r[name])),
    );
  }
  await client.end();
  const dataDir = tmpDir('mindledger-bench-predictjoin-');
  const csv = path.join(dataDir, 'rentals_100k.csv');
  fs.writeFileSync(
    csv,
    [
      COLUMNS.map(([name]) => name).join(','),
      ...rows.map((r) => COLUMNS.map(([name]) => r[name]).join(',')),
    ].join('\n'),
  );

  const server = await startServer('app-server.ts', {
    PORT: '47433',
    DATA_DIR: dataDir,
    BENCH_LOG_LEVEL: 'warn',
    SQL_TIMEOUT_MS: '120000',
  });
  const base = 'http://127.0.0.1:47433';
  try {
    for (const [name, file] of [
      ['home_rentals', sharedData('home_rentals.csv')],
      ['rentals_100k', csv],
    ] as const) {
      const form = new FormData();
      form.append('file', new Blob([fs.readFileSync(file)]), `${name}.csv`);
      const res = await fetch(`${base}/api/files/${name}`, { method: 'PUT', body: form });
      if (!res.ok) throw new Error(`upload ${name}: ${res.status}`);
    }
    const registered = await post(`${base}/api/databases`, {
      database: { name: 'warehouse', engine: 'postgres', parameters: db.parameters },
    });
    if ('type' in registered && registered.type === 'error') throw new Error(JSON.stringify(registered));
    const trained = await post(`${base}/api/sql/query`, {
      query:
        'CREATE MODEL mindsdb.rentals FROM files (SELECT * FROM home_rentals) PREDICT rental_price USING join_learn_process = true',
    });
    if (!trained.data) throw new Error(JSON.stringify(trained));

    const query = async (sql: string) => {
      const answer = await post(`${base}/api/sql/query`, { query: sql });
      if (answer.type !== 'table') throw new Error(`${sql}: ${answer.error_message}`);
      return answer.data;
    };
    const whole = (source: string) =>
      `SELECT count(*) AS n, avg(m.rental_price) AS mean FROM ${source} AS t JOIN mindsdb.rentals AS m`;
    const everyRow = (data: unknown[][]) => {
      if (Number(data[0]![0]) !== ROWS) throw new Error(`expected ${ROWS} rows, got ${JSON.stringify(data)}`);
    };
    const pgMs = await timed(() => query(whole('warehouse.rentals')), everyRow);
    const fileMs = await timed(() => query(whole('files.rentals_100k')), everyRow);
    const limited = (source: string) =>
      `SELECT t.sqft, m.rental_price FROM ${source} AS t JOIN mindsdb.rentals AS m WHERE t.sqft > 900 LIMIT 100`;
    const hundred = (data: unknown[][]) => {
      if (data.length !== 100) throw new Error(`expected 100 rows, got ${data.length}`);
    };
    const pgLimitedMs = await timed(() => query(limited('warehouse.rentals')), hundred);
    const fileLimitedMs = await timed(() => query(limited('files.rentals_100k')), hundred);

    const rate = (ms: number) => (ROWS / ms) * 1000;
    console.log(
      `batch prediction JOIN over ${fmt(ROWS)} rows: PostgreSQL table ${fmt(pgMs)} ms → ${fmt(rate(pgMs))} rows/s vs the same rows as an uploaded file ${fmt(fileMs)} ms → ${fmt(rate(fileMs))} rows/s → ratio ${fmt(ratio(rate(pgMs), rate(fileMs)), 2)}`,
    );
    console.log(
      `… WHERE t.sqft > 900 LIMIT 100 (filter and LIMIT pushed to PostgreSQL, the input narrowed in DuckDB): PostgreSQL ${fmt(pgLimitedMs, 1)} ms vs file ${fmt(fileLimitedMs, 1)} ms → ratio ${fmt(ratio(fileLimitedMs, pgLimitedMs), 2)}`,
    );
  } finally {
    await stopServer(server);
    await db.drop();
  }
};
