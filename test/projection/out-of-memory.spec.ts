/**
 * DuckDB out of memory while the read model is written (a client's query took all of
 * DUCKDB_MEMORY_LIMIT): the runner asks the pool to stop the SQL queries that grew the process and
 * tries the batch again shortly, a few times, before the batch counts as failed. A failure answers
 * every waiting writer 503 and holds the read model for a second or more (the noisy-neighbour
 * bench's ordinary clients got 1,271 of them).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { openDuck, type Duck } from '../../src/duckdb/database';
import { openEventLog } from '../../src/eventlog/open';
import type { EventLog } from '../../src/eventlog/types';
import { ProjectionRunner } from '../../src/projection/runner';
import { withHistoryTables } from '../../src/projection/history';
import type { TableProjection } from '../../src/projection/types';
import { projectsTable } from '../../src/projects/projection';
import { projectStream } from '../../src/projects/state';

const OUT_OF_MEMORY =
  'Out of Memory Error: failed to allocate data of size 2.0 KiB (4.7 GiB/4.7 GiB used)\n\nPossible solutions: …';

type World = {
  runner: ProjectionRunner;
  duck: Duck;
  log: EventLog;
  relieved: () => number;
  close: () => Promise<void>;
};

/** A runner over the projects table whose projection throws `error` (DuckDB out of memory) `failures` times. */
const world = async (failures: number, error = OUT_OF_MEMORY): Promise<World> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oom-'));
  const log = await openEventLog({ dataDir: dir, clock: () => new Date() });
  const duck = await openDuck({ file: ':memory:', allowedDirectory: path.join(dir, 'files'), readers: 2 });
  let relieved = 0;
  // The pool as it is, counting the calls asking it to make room.
  const counting: Duck = Object.assign(Object.create(duck) as Duck, {
    relieveMemory: () => {
      relieved++;
      duck.relieveMemory();
    },
  });
  let left = failures;
  const projects: TableProjection = {
    ...projectsTable,
    apply: (event, rows, lookup) => {
      if (left > 0) {
        left--;
        throw new Error(error);
      }
      return projectsTable.apply(event, rows, lookup);
    },
  };
  const runner = new ProjectionRunner(
    counting,
    log,
    withHistoryTables([projects]),
    pino({ level: 'silent' }),
    {},
  );
  await runner.startServing();
  return {
    runner,
    duck,
    log,
    relieved: () => relieved,
    close: async () => {
      await runner.stop();
      await log.close();
      await duck.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
};

const createProject = (log: EventLog, name: string) =>
  log.append(
    projectStream(name),
    [{ type: 'ProjectCreated', data: { name, createdAt: new Date().toISOString() } }],
    0n,
  );

describe('the read model when DuckDB is out of memory', () => {
  let w: World;
  afterEach(() => w.close());

  it('given DuckDB out of memory for two tries of a batch, when the runner catches up, then it made room twice, applied the batch and recorded no failure', async () => {
    w = await world(2);
    await createProject(w.log, 'crowded');
    await w.runner.catchUp();
    expect(w.relieved()).toBe(2);
    expect(w.runner.failure).toBeNull();
    expect(await w.duck.query('SELECT name FROM projects')).toEqual([{ name: 'crowded' }]);
  });

  it('given DuckDB out of memory at every try, then after five more tries the batch fails as before, naming the error, and the retry after the back-off applies it once memory is back', async () => {
    w = await world(6);
    await createProject(w.log, 'starved');
    await expect(w.runner.catchUp()).rejects.toThrow(/Out of Memory Error/);
    expect(w.relieved()).toBe(5);
    expect(w.runner.failure).toMatchObject({
      eventType: 'ProjectCreated',
      error: expect.stringMatching(/^Out of Memory Error/),
    });
    expect(await w.duck.query('SELECT name FROM projects')).toEqual([]);
    // The six failures are spent: the back-off's retry (a second) applies the event.
    for (let i = 0; i < 100 && w.runner.failure; i++) await new Promise((r) => setTimeout(r, 50));
    expect(w.runner.failure).toBeNull();
    expect(await w.duck.query('SELECT name FROM projects')).toEqual([{ name: 'starved' }]);
  });

  it('given an error that is not about memory, then the batch is not tried again at once and nothing is asked of the pool', async () => {
    w = await world(1, 'Constraint Error: not about memory');
    await createProject(w.log, 'broken');
    await expect(w.runner.catchUp()).rejects.toThrow(/Constraint Error/);
    expect(w.runner.failure).toMatchObject({
      error: expect.stringMatching(/^Constraint Error/),
      attempts: 1,
    });
    expect(w.relieved()).toBe(0);
    expect(await w.duck.query('SELECT name FROM projects')).toEqual([]);
  });
});
