import pino from 'pino';
import { allProjections } from '../projections';
import { loadConfig } from '../src/config';
import { systemClock } from '../src/shared/time';
import { openStores } from '../src/stores';
import { watchCatchUp } from '../src/projection/catchUpProgress';
import { seedProjects } from './asof.bench';
import { logStoresNamed, withLogStore, type LogStore } from './logStores';
import { seedMixedLog } from './mixedLog';
import { fmt, loadAverage, tmpDir } from './support';

/** The service's environment for a replay: the bench's data directory and log, batches of 5,000 events. */
const replayConfig = (env: Record<string, string>) =>
  loadConfig({ ...env, LOG_LEVEL: 'silent', PROJECTION_BATCH_SIZE: '5000' });

/** The slowest tables' shares of a replay: "kb-content 31 %, events 12 %, …". */
const slowest = (spent: { table: string; ms: number }[], count = 5) => {
  const total = spent.reduce((sum, t) => sum + t.ms, 0);
  return [...spent]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count)
    .map((t) => `${t.table} ${fmt((t.ms / Math.max(total, 1)) * 100)} %`)
    .join(', ');
};

/**
 * A full rebuild of the read model from the log, as `npm run replay` makes it (src/cli/replay.ts):
 * the stores opened as the service opens them (src/stores.ts: the log with its sealing of secrets,
 * every table projection and the schema projections of uploaded files and knowledge bases' content),
 * then `rebuild`: drop, prepare, catch up with the whole log, not started first (as the CLI, since
 * a start on a new read model replays the whole log once more). A long replay
 * (`progressEvents` or more) says how it comes along on stderr every minute.
 */
const rebuildOf = async (env: Record<string, string>, progressEvents = 1_000_000) => {
  const stores = await openStores(replayConfig(env), pino({ level: 'silent' }), systemClock, { poll: false });
  try {
    const { events } = await stores.log.head();
    const watch =
      events >= progressEvents
        ? watchCatchUp(
            (listener) => stores.projections.onApplied(listener),
            events,
            (p) =>
              process.stderr.write(
                `replay: ${fmt(p.applied)} of ${fmt(p.total)} events, ${fmt(p.eventsPerSecond)} events/s, about ${fmt(p.secondsLeft ?? 0)} s left\n`,
              ),
            60_000,
          )
        : undefined;
    try {
      const rebuilt = await stores.projections.rebuild();
      return { ...rebuilt, spent: stores.projections.timings() };
    } finally {
      watch?.stop();
    }
  } finally {
    await stores.close();
  }
};

/**
 * Issue 62 goal 1: a log of `total` events of a realistic mix (bench/mixedLog.ts) written on each
 * store (BENCH_REPLAY_STORES, default `sqlite,postgres`), then a full rebuild of the read model from
 * it, timed. Then a log of one stream per project (60 % of the events create a project, 40 %
 * delete the oldest) on SQLite: few kinds of event, but the most rows and AS OF history for one
 * table, which the mix does not reach.
 */
export const benchReplay = async (
  total: number,
  stores: readonly LogStore[] = logStoresNamed(process.env.BENCH_REPLAY_STORES),
) => {
  const rates: Record<string, number> = {};
  for (const store of stores)
    await withLogStore(store, 'mindledger-bench-replay-', async (env) => {
      const seeded = await seedMixedLog(replayConfig(env), total);
      if (total >= 1_000_000)
        process.stderr.write(
          `seeded ${fmt(seeded.events)} events on ${store} in ${fmt(seeded.seedMs / 1000, 1)} s\n`,
        );
      const { events, ms, spent } = await rebuildOf(env);
      rates[store] = (events / ms) * 1000;
      console.log(
        `replay of ${fmt(events)} events (realistic mix: ${seeded.mix}) on ${store} into ${allProjections.length} tables and the knowledge bases' content: ` +
          `${fmt(ms)} ms → ${fmt(rates[store])} events/s (goal ≥ 250,000, issue 62); seeded in ${fmt(seeded.seedMs / 1000, 1)} s; load average ${loadAverage()}`,
      );
      console.log(`  where the ${store} replay went: ${slowest(spent)}`);
    });
  const many = tmpDir('mindledger-bench-replay-many-');
  await seedProjects(many, total);
  const manyRebuilt = await rebuildOf({ DATA_DIR: many });
  const manyRate = (manyRebuilt.events / manyRebuilt.ms) * 1000;
  console.log(
    `replay of ${fmt(manyRebuilt.events)} events, one stream per project (${fmt(total * 0.6)} created, ${fmt(total * 0.4)} deleted) on sqlite: ` +
      `${fmt(manyRebuilt.ms)} ms → ${fmt(manyRate)} events/s (goal ≥ 250,000, issue 62); load average ${loadAverage()}`,
  );
  return {
    name: 'replay',
    eventsPerSecond: rates.sqlite,
    postgresEventsPerSecond: rates.postgres,
    manyStreamsEventsPerSecond: manyRate,
  };
};
