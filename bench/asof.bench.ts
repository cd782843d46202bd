import { loadConfig } from '../src/config';
import { openEventLog } from '../src/eventlog/open';
import { projectStream } from '../src/shared/projectState';
import { LOG_STORES, withLogStore } from './logStores';
import { seedMixedLog } from './mixedLog';
import { fmt, loadAverage, percentile, startServer, stopServer, tmpDir } from './support';

/** Appends in flight at once while seeding: the log groups them into few statements. */
const IN_FLIGHT = 500;

/**
 * A log of `total` events: 60 % create a project each (one stream each), then 40 % delete the
 * oldest ones, so the state in the first tenth of the log and the state now both hold many rows.
 * Answers the position of the event at `share` of the log.
 */
export const seedProjects = async (dataDir: string, total: number) => {
  const log = await openEventLog({ dataDir, clock: () => new Date() });
  const at = new Date().toISOString();
  const creates = Math.round(total * 0.6);
  const ids: bigint[] = new Array<bigint>(creates);
  for (let i = 0; i < creates; i += IN_FLIGHT)
    await Promise.all(
      Array.from({ length: Math.min(IN_FLIGHT, creates - i) }, async (_, k) => {
        const name = `p${i + k}`;
        const done = await log.append(
          projectStream(name),
          [{ type: 'ProjectCreated', data: { name, createdAt: at } }],
          0n,
        );
        ids[i + k] = done.lastPosition;
      }),
    );
  for (let i = 0; i < total - creates; i += IN_FLIGHT)
    await Promise.all(
      Array.from({ length: Math.min(IN_FLIGHT, total - creates - i) }, (_, k) => {
        const name = `p${i + k}`;
        return log.append(
          projectStream(name),
          [{ type: 'ProjectDeleted', data: { projectId: Number(ids[i + k]), name, deletedAt: at } }],
          1n,
        );
      }),
    );
  const head = await log.head();
  await log.close();
  return head.position;
};

/** `query`'s p50 and p99 over `runs` runs through the endpoint, each text new (no cache answers it). */
const timed = async (port: number, runs: number, query: (k: number) => string) => {
  const times: number[] = [];
  let answer: unknown;
  for (let k = 0; k < runs + 3; k++) {
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/api/sql/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: query(k) }),
    });
    const body = (await res.json()) as { type: string; data?: unknown[][] };
    if (body.type !== 'table') throw new Error(JSON.stringify(body));
    if (k >= 3) times.push(performance.now() - t0);
    answer = body.data?.[0]?.[0];
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), answer };
};

/** A log to read AS OF: where it is, and which table's rows to count then and now. */
type AsOfLog = {
  /** What the log is, for the printed line: "1,000,000 events". */
  readonly description: string;
  /** The service's environment: its data directory, and its log on PostgreSQL when it is there. */
  readonly env: Record<string, string>;
  readonly head: bigint;
  readonly seedMs: number;
  /** The rows counted, plural: "projects". */
  readonly rows: string;
  /** The count, AS OF when `asOf` says so; `k` makes each text new. */
  readonly count: (asOf: string, k: number) => string;
};

/**
 * `log.count` AS OF the position 5 % into the log against the same count of the current state,
 * through the SQL endpoint of the service started on the log (which first catches its new read
 * model up with the whole log).
 */
const asOfAtDepth = async (log: AsOfLog) => {
  const early = (log.head * 5n) / 100n;
  const t1 = performance.now();
  const server = await startServer('app-server.ts', { ...log.env, PORT: '47441', BENCH_LOG_LEVEL: 'warn' });
  const startMs = performance.now() - t1;
  const runs = 30;
  const [now, past] = await (async () => {
    try {
      return [
        await timed(47441, runs, (k) => log.count('', k)),
        await timed(47441, runs, (k) => log.count(` AS OF POSITION ${early}`, k)),
      ];
    } finally {
      await stopServer(server);
    }
  })();
  const ratio = past.p50 / now.p50;
  console.log(
    `AS OF at depth on ${log.description} (seeded in ${fmt(log.seedMs / 1000, 1)} s, service ready in ${fmt(startMs / 1000, 1)} s): ` +
      `count(*) of ${log.rows} AS OF POSITION ${early} (5% into the log; ${fmt(Number(past.answer))} ${log.rows} then) p50 ${fmt(past.p50, 1)} ms p99 ${fmt(past.p99, 1)} ms ` +
      `vs now (${fmt(Number(now.answer))} ${log.rows}) p50 ${fmt(now.p50, 1)} ms p99 ${fmt(now.p99, 1)} ms → ${fmt(ratio, 2)}× (goal ≤ 3×); load average ${loadAverage()}`,
  );
  return ratio;
};

/**
 * The realistic mix of the replay bench (bench/mixedLog.ts) on each store, its skills counted: the
 * resource the mix makes most of. The service's start replays the whole log first, which on this
 * mix takes far longer than on the project log (docs/benchmarks.md, goal 1).
 */
const asOfOnTheMix = async (total: number) => {
  const ratios: Record<string, number> = {};
  for (const store of LOG_STORES)
    await withLogStore(store, 'mindledger-bench-asof-', async (env) => {
      const seeded = await seedMixedLog(loadConfig({ ...env, LOG_LEVEL: 'silent' }), total);
      ratios[store] = await asOfAtDepth({
        description: `${fmt(seeded.events)} events of a realistic mix on ${store}`,
        env,
        head: seeded.head,
        seedMs: seeded.seedMs,
        rows: 'skills',
        count: (asOf, k) =>
          `SELECT count(*) AS n FROM information_schema.skills${asOf} WHERE NAME <> 'x${k}'`,
      });
    });
  return { name: 'asof', ratio: ratios.sqlite, postgresRatio: ratios.postgres };
};

/**
 * Issue 62 goal 7: a query AS OF a position in the first tenth of the log against the same query
 * of the current state, through the SQL endpoint, on a generated log (BENCH_ASOF_EVENTS, default
 * 1M; the goal names 10M). The resource tables keep every version with the positions it was true
 * between, so a past read is a range filter over the history beside the live rows. The log is
 * projects created and deleted on SQLite, their count read; BENCH_ASOF_LOG=mix: the replay bench's
 * realistic mix on both stores, its skills counted.
 */
export const benchAsOf = async (total: number) => {
  if (process.env.BENCH_ASOF_LOG === 'mix') return asOfOnTheMix(total);
  const dataDir = tmpDir('mindledger-bench-asof-');
  const t0 = performance.now();
  const head = await seedProjects(dataDir, total);
  const ratio = await asOfAtDepth({
    description: `${fmt(Number(head))} events`,
    env: { DATA_DIR: dataDir },
    head,
    seedMs: performance.now() - t0,
    rows: 'projects',
    count: (asOf, k) =>
      `SELECT count(*) AS n FROM information_schema.databases${asOf} WHERE TYPE = 'project' AND NAME <> 'x${k}'`,
  });
  return { name: 'asof', ratio };
};
