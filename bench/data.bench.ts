import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { freshPostgresData } from '../test/support/external';
import { fmt, percentile, ratio, startServer, stopServer, tmpDir } from './support';

const run = promisify(execFile);

const makeCsv = (file: string, rows: number) => {
  const out = fs.openSync(file, 'w');
  fs.writeSync(out, 'id,category,amount,score,label\n');
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    chunk += `${i},cat_${i % 50},${(i % 1000) * 1.25},${i % 7},"label ${i % 13}"\n`;
    if (chunk.length > 1 << 20) {
      fs.writeSync(out, chunk);
      chunk = '';
    }
  }
  fs.writeSync(out, chunk);
  fs.closeSync(out);
};

const timed = async (times: number, once: () => Promise<unknown>) => {
  for (let i = 0; i < 3; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await once();
    samples.push(performance.now() - t0);
  }
  return percentile(samples, 50);
};

/** Upload + load of a 1M-row CSV against DuckDB's own read_csv; a pushed-down aggregate against psql. */
export const benchData = async () => {
  const rows = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
  const dir = tmpDir('mindledger-bench-data-');
  const csv = path.join(dir, 'big.csv');
  makeCsv(csv, rows);
  const size = fs.statSync(csv).size;

  const duck = await DuckDBInstance.create(':memory:');
  const c = await duck.connect();
  let t0 = performance.now();
  await c.run(`CREATE TABLE t AS SELECT * FROM read_csv('${csv}')`);
  const duckMs = performance.now() - t0;
  c.closeSync();
  duck.closeSync();

  const dataDir = tmpDir('mindledger-bench-data-app-');
  const server = await startServer('app-server.ts', {
    PORT: '47421',
    DATA_DIR: dataDir,
    BENCH_LOG_LEVEL: 'warn',
  });
  const form = new FormData();
  form.append('file', new Blob([fs.readFileSync(csv)]), 'big.csv');
  t0 = performance.now();
  const res = await fetch('http://127.0.0.1:47421/api/files/big', { method: 'PUT', body: form });
  const uploadMs = performance.now() - t0;
  const body = (await res.json()) as { row_count?: number };
  if (body.row_count !== rows) throw new Error(`upload answered ${JSON.stringify(body)}`);

  // 1M rows in PostgreSQL; the same aggregate through the endpoint (pushed down) and through psql.
  const pgData = await freshPostgresData([
    'CREATE TABLE events (id int, category text, amount numeric(10,2))',
    `INSERT INTO events SELECT g, 'cat_' || (g % 50), (g % 1000) * 1.25 FROM generate_series(1, ${rows}) g`,
    'ANALYZE events',
  ]);
  const query =
    'SELECT category, count(*) AS n, sum(amount) AS total FROM events GROUP BY category ORDER BY category';
  await fetch('http://127.0.0.1:47421/api/sql/query', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `CREATE DATABASE bench_pg WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(pgData.parameters)}`,
    }),
  });
  const endpointMs = await timed(15, async () => {
    const r = await fetch('http://127.0.0.1:47421/api/sql/query', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: query.replace('FROM events', 'FROM bench_pg.events') }),
    });
    const b = (await r.json()) as { type: string; data?: unknown[] };
    if (b.type !== 'table' || b.data?.length !== 50) throw new Error(JSON.stringify(b));
  });
  const psqlMs = await timed(15, () =>
    run('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', pgData.name, '-A', '-t', '-c', query]),
  );
  await stopServer(server);
  await pgData.drop();

  const ours = (rows / uploadMs) * 1000;
  const theirs = (rows / duckMs) * 1000;
  console.log(
    `CSV upload + load, ${fmt(rows)} rows (${fmt(size / 1e6, 1)} MB) over HTTP: ${fmt(uploadMs)} ms → ${fmt(ours)} rows/s` +
      ` vs DuckDB read_csv in process ${fmt(duckMs)} ms → ${fmt(theirs)} rows/s (ratio ${fmt(ratio(ours, theirs), 2)}; goal ≥ 200,000 rows/s)`,
  );
  console.log(
    `pushed-down GROUP BY over ${fmt(rows)} PostgreSQL rows: endpoint p50 ${fmt(endpointMs, 1)} ms vs psql p50 ${fmt(psqlMs, 1)} ms` +
      ` → ${fmt(endpointMs / psqlMs, 2)}× (goal ≤ 1.5×)`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
};
