import crypto from 'node:crypto';
import pino from 'pino';
import { createApp, type RunningApp } from '../src/app';
import { loadConfig } from '../src/config';
import { freshPostgresDatabase } from '../test/support/postgres';
import { fmt, percentile, ratio, tmpDir } from './support';

/** Two processes' worth of app on one fresh PostgreSQL log (in this process, each with its own DuckDB). */
const twoNodes = async (env: Record<string, string>) => {
  const db = await freshPostgresDatabase();
  // Processes on one log share one master key (each would otherwise make its own and refuse the other's).
  const masterKey = crypto.randomBytes(32).toString('base64');
  const start = () =>
    createApp(
      loadConfig({
        DATA_DIR: tmpDir('mindledger-bench-lag-'),
        EVENT_STORE_URL: db.url,
        LEDGER_MASTER_KEY: masterKey,
        LOG_LEVEL: 'silent',
        // Checkpoints are events of their own: not part of what is measured.
        LEDGER_CHECKPOINT_EVENTS: '1000000000',
        LEDGER_CHECKPOINT_MS: '86400000',
        LEDGER_CHECKPOINT_ON_STOP: 'false',
        ...env,
      }),
      { logger: pino({ level: 'silent' }) },
    );
  const a = await start();
  const b = await start();
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
      await db.drop();
    },
  };
};

/**
 * Writes on A at a steady rate; for each, the time from its commit (as A sees it: the append
 * returned) until B's read model includes it. B may get there first (A's answer is still on its
 * way through the event loop): that counts as no lag.
 */
const lagOnB = async (env: Record<string, string>, perSecond: number, seconds: number) => {
  const { a, b, close } = await twoNodes(env);
  try {
    const committedAt = new Map<bigint, number>();
    const appliedAt = new Map<bigint, number>();
    const append = a.ctx.log.append.bind(a.ctx.log);
    a.ctx.log.append = async (...args) => {
      const result = await append(...args);
      committedAt.set(result.lastPosition, performance.now());
      return result;
    };
    b.ctx.projections.onApplied((events) => {
      const now = performance.now();
      for (const e of events) appliedAt.set(e.meta.position, now);
    });
    const count = perSecond * seconds;
    const writes: Promise<unknown>[] = [];
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      // On schedule, not after the previous answer: a slow write does not slow the rate down.
      const due = started + (i * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      writes.push(a.services.projects.create(`lag_${i}`));
    }
    await Promise.all(writes);
    const seen = () => [...committedAt.keys()].filter((p) => appliedAt.has(p)).length;
    const deadline = performance.now() + 10_000;
    while (seen() < committedAt.size && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    const lags = [...committedAt].flatMap(([position, committed]) => {
      const applied = appliedAt.get(position);
      return applied === undefined ? [] : [Math.max(0, applied - committed)];
    });
    return { p50: percentile(lags, 50), p99: percentile(lags, 99), seen: lags.length, count };
  } finally {
    await close();
  }
};

/** Project creations, `concurrency` at once, on A alone or spread over A and B. */
const writesPerSecond = async (writers: 1 | 2, count: number, concurrency: number) => {
  const { a, b, close } = await twoNodes({});
  try {
    const nodes: RunningApp[] = writers === 1 ? [a] : [a, b];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async (_, worker) => {
        const node = nodes[worker % nodes.length]!;
        while (next < count) await node.services.projects.create(`w_${next++}`);
      }),
    );
    return (count / (performance.now() - started)) * 1000;
  } finally {
    await close();
  }
};

/**
 * How far behind another process's writes a process's read model runs on a shared PostgreSQL log:
 * with notifications (LISTEN/NOTIFY, the default) against polling alone (every 200 ms), and what
 * writing on two processes instead of one does to throughput.
 */
export const benchLag = async (seconds: number) => {
  const perSecond = 25;
  const notified = await lagOnB({}, perSecond, seconds);
  const polled = await lagOnB({ PROJECTION_LISTEN: 'false', PROJECTION_POLL_MS: '200' }, perSecond, seconds);
  const shape = (r: typeof notified) =>
    `p50 ${fmt(r.p50, 1)} ms p99 ${fmt(r.p99, 1)} ms${r.seen < r.count ? ` (${r.count - r.seen} never seen)` : ''}`;
  console.log(
    `lag of B behind writes on A (PostgreSQL, ${perSecond} writes/s for ${seconds} s): NOTIFY ${shape(notified)}` +
      ` vs polling every 200 ms ${shape(polled)} → p99 ${fmt(ratio(notified.p99, polled.p99), 2)} (goal: NOTIFY p99 ≤ 50 ms)`,
  );
  const count = 1000;
  const concurrency = 16;
  const one = await writesPerSecond(1, count, concurrency);
  const two = await writesPerSecond(2, count, concurrency);
  console.log(
    `project create, ${concurrency} concurrent, both nodes projecting every event: 2 nodes writing ${fmt(two)} writes/s` +
      ` vs 1 node ${fmt(one)} writes/s → ${fmt(ratio(two, one), 2)}`,
  );
  return { notified, polled, one, two };
};
