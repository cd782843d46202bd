import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { fmt, jsonHeaders, mixedRequests, peakRssDuring, ratio, tmpDir } from './support';

const HTTP_PORT = 47431;
const MYSQL_PORT = 47432;
const PG_PORT = 47433;
const base = `http://127.0.0.1:${HTTP_PORT}`;

/** The service as `npm start` runs it (the compiled main, every door on), on ports of its own. */
const startService = async (dataDir: string, logFile: string): Promise<ChildProcess> => {
  const compiled = __filename.endsWith('.js');
  const main = path.join(__dirname, '..', 'src', compiled ? 'main.js' : 'main.ts');
  const child = fork(main, [], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(HTTP_PORT),
      MYSQL_PORT: String(MYSQL_PORT),
      PG_PORT: String(PG_PORT),
      LOG_LEVEL: 'warn',
      // A bound short enough for a benchmark of seconds; every other bound at its default.
      SQL_TIMEOUT_MS: '5000',
      PG_CATALOG_TIMEOUT_MS: '5000',
    },
    execArgv: compiled ? [] : ['--import', 'tsx'],
    // Its log (warnings and errors) is kept beside the data, so a refused request can be explained.
    stdio: ['ignore', fs.openSync(logFile, 'w'), 'inherit', 'ipc'],
  });
  for (let i = 0; i < 600; i++) {
    const up = await fetch(`${base}/api/util/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('the service did not start');
};

/** The heaviest bounded work each door lets one client ask for, round and round until told to stop. */
const noisyClient = (stop: () => boolean) => {
  const outcomes = new Map<string, number>();
  const note = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
  const http = async (query: string, params?: Record<string, unknown>) => {
    const res = await fetch(`${base}/api/sql/query`, {
      method: 'POST',
      headers: jsonHeaders,
      body: JSON.stringify({ query, ...(params ? { params } : {}) }),
    });
    const body = (await res.json()) as { type?: string; error_code?: number };
    note(`HTTP ${body.type === 'error' ? `error ${body.error_code}` : (body.type ?? res.status)}`);
  };
  const manyParams = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`p${i}`, i]));
  const run = async () => {
    const my = await mysql.createConnection({ host: '127.0.0.1', port: MYSQL_PORT, user: 'mindsdb' });
    const pgc = new pg.Client({ host: '127.0.0.1', port: PG_PORT, user: 'mindsdb', database: 'mindsdb' });
    await pgc.connect();
    const door = async (name: string, work: () => Promise<unknown>) => {
      try {
        await work();
        note(`${name} answered`);
      } catch (error) {
        const e = error as { code?: string; errno?: number };
        note(`${name} error ${e.errno ?? e.code ?? 'other'}`);
      }
    };
    try {
      while (!stop()) {
        // Memory: a string aggregate DuckDB's limit does not see whole, and a value past its bound.
        await http("SELECT length(string_agg(repeat('x', 1000), '')) FROM range(2000000)");
        await http("SELECT repeat('a', 600000000)");
        // Time: a query that runs until SQL_TIMEOUT_MS.
        await http('SELECT count(*) FROM range(100000000000) a');
        // Parameters: as many as SQL_MAX_PARAMS allows.
        await http(
          `SELECT 8 WHERE 1 IN (${Object.keys(manyParams)
            .map((k) => `:${k}`)
            .join(',')})`,
          manyParams,
        );
        await door('MySQL', () => my.query('SELECT count(*) FROM range(100000000000) a'));
        await door('PostgreSQL', () => pgc.query('SELECT count(*) FROM range(100000000000) a'));
        // The PostgreSQL door's catalog, its own process and limits.
        await door('PostgreSQL catalog', () =>
          pgc.query('SELECT count(*) FROM pg_catalog.pg_class, range(10000000) r'),
        );
        await door('PostgreSQL catalog', () =>
          pgc.query('SELECT count(*) FROM (SELECT unnest(range(100000000)) FROM pg_catalog.pg_class) x'),
        );
      }
    } finally {
      await my.end().catch(() => undefined);
      await pgc.end().catch(() => undefined);
    }
  };
  return { done: run(), outcomes };
};

type Phase = {
  p50: number;
  p99: number;
  rps: number;
  errors: number;
  non2xx: number;
  peakRss: number;
  /** Answers other than 2xx, by status code. */
  refused: string;
};

/** 16 clients' ordinary reads and writes for `seconds`, the process's RSS sampled meanwhile. */
const ordinaryTraffic = async (pid: number, seconds: number, phase: string): Promise<Phase> => {
  const counter = { n: 0 };
  const { result: r, peak: peakRss } = await peakRssDuring(
    pid,
    () =>
      autocannon({
        url: base,
        connections: 16,
        duration: seconds,
        requests: [
          ...mixedRequests('noisy', counter, (n) => ({ name: `${phase}_${n}`, type: 'text', params: { n } })),
          { method: 'GET', path: '/api/projects/noisy/skills' },
        ],
      }),
    100,
  );
  return {
    p50: r.latency.p50,
    p99: r.latency.p99,
    rps: r.requests.average,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    peakRss,
    refused: Object.entries(r.statusCodeStats ?? {})
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, { count }]) => `${code}×${count}`)
      .join(' '),
  };
};

/** The service's log lines at warning level or above, counted by message (and error, if any). */
const loggedProblems = (logFile: string) => {
  const counts = new Map<string, number>();
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    let entry: { level?: number; msg?: string; err?: { message?: string } };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if ((entry.level ?? 0) < 40 || entry.msg?.startsWith('AUTHENTICATION IS OFF')) continue;
    const key = `${entry.msg ?? '?'}${entry.err?.message ? ` (${entry.err.message.slice(0, 120)})` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return (
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([k, n]) => `${n}× ${k}`)
      .join('; ') || 'none'
  );
};

/**
 * A noisy neighbour: one client sends the heaviest bounded queries each door allows (memory, time,
 * parameters, the PostgreSQL catalog) while 16 others read and write as usual. Their p99 and error
 * count beside it, against the same traffic alone in the same run, and the process's peak RSS.
 */
export const benchNoisyNeighbour = async (seconds: number) => {
  const dataDir = tmpDir('mindledger-bench-noisy-');
  const logFile = path.join(path.dirname(dataDir), 'mindledger-bench-noisy-service.log');
  const service = await startService(dataDir, logFile);
  const pid = service.pid!;
  try {
    await fetch(`${base}/api/projects`, {
      method: 'POST',
      headers: jsonHeaders,
      body: JSON.stringify({ name: 'noisy' }),
    });
    const duration = Math.max(10, seconds * 2);
    const alone = await ordinaryTraffic(pid, duration, 'alone');
    let stopping = false;
    const noisy = noisyClient(() => stopping);
    const beside = await ordinaryTraffic(pid, duration, 'beside');
    stopping = true;
    await noisy.done;
    const line = (name: string, p: Phase) =>
      `noisy neighbour: 16 clients ${name}: ${fmt(p.rps)} req/s, p50 ${p.p50} ms, p99 ${p.p99} ms, errors ${p.errors}, non-2xx ${p.non2xx}${p.refused ? ` (${p.refused})` : ''}, peak RSS ${fmt(p.peakRss)} MiB`;
    console.log(line('alone', alone));
    console.log(line('beside the noisy client', beside));
    console.log(
      `noisy neighbour: p99 beside / alone ${fmt(ratio(beside.p99, alone.p99), 2)}×, errors ${beside.errors + beside.non2xx} (goal 0); the noisy client's ${[
        ...noisy.outcomes,
      ]
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}`,
    );
    if (beside.errors + beside.non2xx + alone.errors + alone.non2xx > 0)
      console.log(
        `noisy neighbour: the service's warnings and errors (${logFile}): ${loggedProblems(logFile)}`,
      );
    return { alone, beside };
  } finally {
    await new Promise<void>((resolve) => {
      service.once('exit', () => resolve());
      service.kill('SIGTERM');
    });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};
