import pino from 'pino';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { openEventLog } from '../src/eventlog/open';
import { projectStream } from '../src/projects/state';
import { freshPostgresDatabase } from '../test/support/postgres';
import { fmt, ratio, tmpDir } from './support';

const runConcurrently = async (count: number, concurrency: number, work: (i: number) => Promise<unknown>) => {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await work(next++);
    }),
  );
  return (count / (performance.now() - started)) * 1000;
};

/**
 * Project creation through the service (decider, append, projection, read-back) against raw
 * appends of the same event to the same kind of store, with the same concurrency.
 */
export const benchWrites = async (count: number) => {
  const results: { store: string; ratio: number }[] = [];
  for (const store of ['sqlite', 'postgres'] as const) {
    for (const concurrency of [1, 16]) {
      const pgRaw = store === 'postgres' ? await freshPostgresDatabase() : undefined;
      const pgApp = store === 'postgres' ? await freshPostgresDatabase() : undefined;

      const rawLog = await openEventLog({
        url: pgRaw?.url,
        dataDir: tmpDir('mindledger-bench-raw-'),
        clock: () => new Date(),
      });
      const raw = await runConcurrently(count, concurrency, (i) =>
        rawLog.append(
          projectStream(`raw_${i}`),
          [{ type: 'ProjectCreated', data: { name: `raw_${i}`, createdAt: new Date().toISOString() } }],
          0n,
        ),
      );
      await rawLog.close();

      const config = loadConfig({
        DATA_DIR: tmpDir('mindledger-bench-app-'),
        ...(pgApp ? { EVENT_STORE_URL: pgApp.url } : {}),
      });
      const app = await createApp(config, { logger: pino({ level: 'silent' }) });
      const ours = await runConcurrently(count, concurrency, (i) => app.services.projects.create(`p_${i}`));
      await app.close();
      await pgRaw?.drop();
      await pgApp?.drop();

      const r = ratio(ours, raw);
      console.log(
        `project create on ${store}, ${concurrency} concurrent: ${fmt(ours)} writes/s with projections` +
          ` vs raw appendToStream ${fmt(raw)} appends/s → ${fmt(r, 2)} (goal ≥ 0.60)`,
      );
      results.push({ store: `${store}/${concurrency}`, ratio: r });
    }
  }
  return results;
};
