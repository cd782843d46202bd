import { openEventLog } from '../src/eventlog/open';
import { projectStream } from '../src/shared/projectState';
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

/**
 * Issue 62 goal 7: a query AS OF a position in the first tenth of the log against the same query
 * of the current state, through the SQL endpoint, on a generated log (BENCH_ASOF_EVENTS, default
 * 1M; the goal names 10M). The resource tables keep every version with the positions it was true
 * between, so a past read is a range filter over the history beside the live rows.
 */
export const benchAsOf = async (total: number) => {
  const dataDir = tmpDir('mindledger-bench-asof-');
  const t0 = performance.now();
  const head = await seedProjects(dataDir, total);
  const seedMs = performance.now() - t0;
  const early = (head * 5n) / 100n;
  const t1 = performance.now();
  const server = await startServer('app-server.ts', {
    PORT: '47441',
    DATA_DIR: dataDir,
    BENCH_LOG_LEVEL: 'warn',
  });
  const startMs = performance.now() - t1;
  const runs = 30;
  const projects = (asOf: string, k: number) =>
    `SELECT count(*) AS n FROM information_schema.databases${asOf} WHERE TYPE = 'project' AND NAME <> 'x${k}'`;
  const [now, past] = await (async () => {
    try {
      return [
        await timed(47441, runs, (k) => projects('', k)),
        await timed(47441, runs, (k) => projects(` AS OF POSITION ${early}`, k)),
      ];
    } finally {
      await stopServer(server);
    }
  })();
  const ratio = past.p50 / now.p50;
  console.log(
    `AS OF at depth on ${fmt(Number(head))} events (seeded in ${fmt(seedMs / 1000, 1)} s, service ready in ${fmt(startMs / 1000, 1)} s): ` +
      `count(*) of projects AS OF POSITION ${early} (5% into the log; ${fmt(Number(past.answer))} projects then) p50 ${fmt(past.p50, 1)} ms p99 ${fmt(past.p99, 1)} ms ` +
      `vs now (${fmt(Number(now.answer))} projects) p50 ${fmt(now.p50, 1)} ms p99 ${fmt(now.p99, 1)} ms → ${fmt(ratio, 2)}× (goal ≤ 3×); load average ${loadAverage()}`,
  );
  return { name: 'asof', ratio };
};
