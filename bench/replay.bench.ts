import pino from 'pino';
import { allProjections } from '../projections';
import { openDuck } from '../src/duckdb/database';
import { openEventLog } from '../src/eventlog/open';
import { ProjectionRunner } from '../src/projection/runner';
import { seedProjects } from './asof.bench';
import { seedLog } from './sql.bench';
import { fmt, tmpDir } from './support';

/** A full rebuild of every projection from the log in `dataDir`: events and milliseconds. */
const rebuildOf = async (dataDir: string) => {
  const log = await openEventLog({ dataDir, clock: () => new Date() });
  const duck = await openDuck({
    file: `${dataDir}/projections.duckdb`,
    allowedDirectory: `${dataDir}/files`,
  });
  const runner = new ProjectionRunner(duck, log, allProjections, pino({ level: 'silent' }), {
    batchSize: 5000,
  });
  await runner.start();
  const rebuilt = await runner.rebuild();
  await runner.stop();
  await log.close();
  await duck.close();
  return rebuilt;
};

/**
 * Writes `total` events twice over, then times a full rebuild of every projection: project
 * lifecycles on few streams (each project created and deleted again and again), and one stream per
 * project (60 % of the events create one, 40 % delete the oldest: many rows, and their AS OF history).
 */
export const benchReplay = async (total: number) => {
  const few = tmpDir('mindledger-bench-replay-');
  await seedLog(few, total);
  const { events, ms } = await rebuildOf(few);
  const rate = (events / ms) * 1000;
  console.log(
    `replay of ${fmt(events)} events into ${allProjections.length} tables: ${fmt(ms)} ms → ${fmt(rate)} events/s (goal ≥ 250,000, issue 62)`,
  );
  const many = tmpDir('mindledger-bench-replay-many-');
  await seedProjects(many, total);
  const manyRebuilt = await rebuildOf(many);
  const manyRate = (manyRebuilt.events / manyRebuilt.ms) * 1000;
  console.log(
    `replay of ${fmt(manyRebuilt.events)} events, one stream per project (${fmt(total * 0.6)} created, ${fmt(total * 0.4)} deleted): ${fmt(manyRebuilt.ms)} ms → ${fmt(manyRate)} events/s (goal ≥ 250,000, issue 62)`,
  );
  return { name: 'replay', eventsPerSecond: rate, manyStreamsEventsPerSecond: manyRate };
};
