import pino from 'pino';
import { allProjections } from '../projections';
import { openDuck } from '../src/duckdb/database';
import { openEventLog } from '../src/eventlog/open';
import { ProjectionRunner } from '../src/projection/runner';
import { seedLog } from './sql.bench';
import { fmt, tmpDir } from './support';

/** Writes `total` events (project and database lifecycles), then times a full rebuild of every projection. */
export const benchReplay = async (total: number) => {
  const dataDir = tmpDir('mindledger-bench-replay-');
  await seedLog(dataDir, total);
  const log = await openEventLog({ dataDir, clock: () => new Date() });
  const duck = await openDuck({
    file: `${dataDir}/projections.duckdb`,
    allowedDirectory: `${dataDir}/files`,
  });
  const runner = new ProjectionRunner(duck, log, allProjections, pino({ level: 'silent' }), {
    batchSize: 5000,
  });
  await runner.start();
  const { events, ms } = await runner.rebuild();
  const rate = (events / ms) * 1000;
  console.log(
    `replay of ${fmt(events)} events into ${allProjections.length} tables: ${fmt(ms)} ms → ${fmt(rate)} events/s (goal ≥ 50,000)`,
  );
  await runner.stop();
  await log.close();
  await duck.close();
  return { name: 'replay', eventsPerSecond: rate };
};
