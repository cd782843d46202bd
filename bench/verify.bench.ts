import { performance } from 'node:perf_hooks';
import { defaultWitnesses, verifyStoredLog } from '../src/audit/verifyStored';
import { loadConfig, type Config } from '../src/config';
import { openEventLog } from '../src/eventlog/open';
import { freshPostgresDatabase } from '../test/support/postgres';
import { encodeAndHash } from './ledger.bench';
import { seedLog } from './sql.bench';
import { fmt, inTurns, loadAverage, startServer, stopServer, tmpDir } from './support';

type Store = 'sqlite' | 'postgres';

/** As `verifyWholeLog` pages the log (src/audit/ledger.ts). */
const PAGE = 5000;

/**
 * `total` events as replay's benchmark writes them (bench/sql.bench.ts, `seedLog`), then projected
 * and signed by the service itself (its read model records the leaf hashes, and a clean stop signs a
 * checkpoint over the whole log): what `npm run verify` finds on a stopped service's data directory.
 */
const signedLog = async (store: Store, total: number) => {
  const pg = store === 'postgres' ? await freshPostgresDatabase() : undefined;
  const dataDir = tmpDir(`mindledger-bench-verify-${store}-`);
  const env = { DATA_DIR: dataDir, ...(pg ? { EVENT_STORE_URL: pg.url } : {}) };
  await seedLog(dataDir, total, pg?.url);
  const server = await startServer('app-server.ts', { ...env, PORT: '47451', BENCH_LOG_LEVEL: 'warn' });
  await stopServer(server);
  return { config: loadConfig(env), dispose: async () => pg?.drop() };
};

/**
 * The floor over the stored events themselves: each page read as the verification reads it, and
 * only the encoding and hashing of its events timed. Answers the floor's rate and the rate of the
 * whole pass (reading included).
 */
const floorOver = async (config: Config) => {
  const log = await openEventLog({
    url: config.eventStoreUrl,
    dataDir: config.dataDir,
    clock: () => new Date(),
  });
  try {
    const started = performance.now();
    let hashingMs = 0;
    let events = 0;
    let cursor = { position: 0n, transactionId: null as string | null };
    for (;;) {
      const page = await log.readAll(cursor, PAGE);
      if (page.events.length === 0) break;
      const t0 = performance.now();
      encodeAndHash(page.events);
      hashingMs += performance.now() - t0;
      events += page.events.length;
      cursor = page.cursor;
    }
    return {
      events,
      floorRate: (events / hashingMs) * 1000,
      readRate: (events / (performance.now() - started)) * 1000,
    };
  } finally {
    await log.close();
  }
};

/**
 * Issue 62, goal 1: `npm run verify` over the log replay rebuilds, at ≥ 500,000 events/s. What the
 * CLI runs (`verifyStoredLog`, in process) against the floor of encoding and hashing the same
 * events, measured in turns (the floor's pass, then a verification, three times).
 */
export const benchVerify = async (total: number, stores: readonly Store[] = ['sqlite', 'postgres']) => {
  const rates: Record<string, number> = {};
  for (const store of stores) {
    const signed = await signedLog(store, total);
    try {
      const witnesses = defaultWitnesses(signed.config);
      let events = 0;
      let checkpoints = 0;
      let passRate = 0;
      const turns = await inTurns(
        async () => {
          const floor = await floorOver(signed.config);
          passRate = floor.readRate;
          return floor.floorRate;
        },
        async () => {
          const started = performance.now();
          const result = await verifyStoredLog(signed.config, witnesses);
          const ms = performance.now() - started;
          if (!result.ok) throw new Error(`verify failed on an untouched log: ${result.detail}`);
          events = result.events;
          checkpoints = result.checkpointsVerified;
          return (events / ms) * 1000;
        },
      );
      rates[store] = turns.ours;
      console.log(
        `verify of ${fmt(events)} events (stored ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'} log, ${fmt(checkpoints)} checkpoints, ` +
          `the read model's leaf hashes compared): ${fmt((events / turns.ours) * 1000)} ms → ${fmt(turns.ours)} events/s ` +
          `vs the encode + SHA-256 floor ${fmt(turns.baseline)} events/s → ${fmt(turns.ratio, 2)} (turns ${turns.turns}); ` +
          `reading the log and hashing alone ${fmt(passRate)} events/s; goal ≥ 500,000 events/s (issue 62); load average ${loadAverage()}`,
      );
    } finally {
      await signed.dispose();
    }
  }
  return { name: 'verify', eventsPerSecond: rates };
};
