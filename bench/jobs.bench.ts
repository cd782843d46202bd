import pino from 'pino';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { freshPostgresDatabase } from '../test/support/postgres';
import { fmt, percentile, ratio, tmpDir } from './support';

type Store = 'sqlite' | 'postgres';
const MINUTE = 60_000;

/**
 * A job tick's overhead: a job of one `SELECT 1` every minute, on a clock the benchmark moves; each
 * round moves it a minute on and times the scheduler's look from "due" to the run finished and its
 * events in the read model (the claim appended under the version check, the statement through the
 * SQL service, its outcome and the finish recorded), against running that SELECT directly through
 * the same SQL service.
 */
const benchStore = async (store: Store, rounds: number) => {
  const pg = store === 'postgres' ? await freshPostgresDatabase() : undefined;
  let now = Date.parse('2030-01-01T00:00:00.000Z');
  const app = await createApp(
    loadConfig({
      DATA_DIR: tmpDir('mindledger-bench-jobs-'),
      JOBS_POLL_MS: '0',
      LEDGER_CHECKPOINT_EVENTS: '1000000000',
      LEDGER_CHECKPOINT_MS: '86400000',
      ...(pg ? { EVENT_STORE_URL: pg.url } : {}),
    }),
    { logger: pino({ level: 'silent' }), clock: () => new Date(now) },
  );
  try {
    const created = await app.sql.execute(
      "CREATE JOB mindsdb.bench (SELECT 1) START '2030-01-01 00:01:00' EVERY minute",
      { db: 'mindsdb' },
      {},
    );
    if (created.type !== 'ok') throw new Error(JSON.stringify(created));
    const direct: number[] = [];
    const ticks: number[] = [];
    const warmup = Math.min(50, rounds);
    for (let i = 0; i < rounds + warmup; i++) {
      now += MINUTE;
      const t0 = performance.now();
      await app.jobs.tick();
      const t1 = performance.now();
      const answer = await app.sql.execute('SELECT 1', { db: 'mindsdb' }, {});
      const t2 = performance.now();
      if (answer.type !== 'table') throw new Error(JSON.stringify(answer));
      if (i >= warmup) {
        ticks.push(t1 - t0);
        direct.push(t2 - t1);
      }
    }
    const runs = await app.sql.execute(
      "SELECT count(*) AS n, count(*) FILTER (WHERE STATUS = 'finished') AS ok FROM information_schema.JOB_RUNS WHERE NAME = 'bench'",
      { db: 'mindsdb' },
      {},
    );
    const [n, ok] = runs.type === 'table' ? (runs.data[0] as [unknown, unknown]) : [0, 0];
    const p50Tick = percentile(ticks, 50);
    const p50Direct = percentile(direct, 50);
    console.log(
      `  ${store.padEnd(8)} job tick p50 ${fmt(p50Tick, 2)} ms, p99 ${fmt(percentile(ticks, 99), 2)} ms | ` +
        `SELECT 1 direct p50 ${fmt(p50Direct, 3)} ms, p99 ${fmt(percentile(direct, 99), 3)} ms | ` +
        `overhead ratio (p50) ${fmt(ratio(p50Tick, p50Direct), 1)}x | runs ${String(n)}, finished ${String(ok)}`,
    );
  } finally {
    await app.close();
    await pg?.drop();
  }
};

export const benchJobs = async () => {
  const rounds = Number(process.env.BENCH_JOB_TICKS ?? 300);
  console.log(
    `jobs: ${rounds} ticks of a one-statement job (SELECT 1), due → finished, vs that SELECT directly`,
  );
  for (const store of ['sqlite', 'postgres'] as const) await benchStore(store, rounds);
};
