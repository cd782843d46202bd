import pino from 'pino';
import { allProjections } from '../projections';
import { openDuck } from '../src/duckdb/database';
import { openEventLog } from '../src/eventlog/open';
import { ProjectionRunner } from '../src/projection/runner';
import { projectStream } from '../src/projects/aggregate';
import { fmt, tmpDir } from './support';

/** Writes `total` events (project and database lifecycles), then times a full rebuild of every projection. */
export const benchReplay = async (total: number) => {
  const dataDir = tmpDir('mindledger-bench-replay-');
  const log = await openEventLog({ dataDir, clock: () => new Date() });
  const at = new Date().toISOString();
  let written = 0;
  for (let s = 0; written < total; s++) {
    // Each stream: created, then alternately deleted and re-created (ids follow positions).
    const events = [];
    for (let k = 0; k < 100 && written + events.length < total; k++) {
      events.push(
        k % 2 === 0
          ? { type: 'ProjectCreated', data: { name: `p${s}`, createdAt: at } }
          : { type: 'ProjectDeleted', data: { projectId: written + k, name: `p${s}`, deletedAt: at } },
      );
    }
    await log.append(projectStream(`p${s}`), events, 0n);
    written += events.length;
  }
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
  runner.stop();
  await log.close();
  await duck.close();
  return { name: 'replay', eventsPerSecond: rate };
};
