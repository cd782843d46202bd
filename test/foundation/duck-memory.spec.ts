/**
 * DuckDB's memory and the read model's writer (src/duckdb/memoryWatch.ts): SQL queries stop when the
 * memory DuckDB can neither evict nor spill passes its limit less the room kept for the writer,
 * a commit begins with room, and DuckDB invalidating its database is noticed once. Reproduced
 * before: three clients aggregating 2 GB of text under a 300 MiB limit made the writer's batches
 * meet the limit, and one rollback that met it too made DuckDB invalidate the database.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bytesOfSize } from '../../src/shared/sizes';
import { openDuck, type Duck, type MemoryPressure } from '../../src/duckdb/database';
import { writerRoom } from '../../src/duckdb/memoryWatch';
import { isInvalidatedMessage, isMemoryShortageMessage } from '../../src/duckdb/errors';
import { startTestApp, type TestApp } from '../support/app';

const MIB = 1024 * 1024;

/** An ungrouped aggregate whose state (DuckDB's ALLOCATOR tag) doubles past any limit here. */
const HEAVY = "SELECT length(string_agg(repeat('x', 1000) || range::VARCHAR, '')) AS n FROM range(2000000)";

describe('sizes and room', () => {
  it('given sizes as DuckDB prints its settings, when read, then they are bytes; anything else is NaN', () => {
    expect(bytesOfSize('300.0 MiB')).toBe(300 * MIB);
    expect(bytesOfSize('4.7 GiB')).toBe(Math.floor(4.7 * 1024 ** 3));
    expect(bytesOfSize('0 bytes')).toBe(0);
    expect(bytesOfSize('512MB')).toBe(512e6);
    expect(bytesOfSize('unlimited')).toBeNaN();
    expect(bytesOfSize('12 parsecs')).toBeNaN();
  });

  it('given limits, when the writer room is worked out, then it is a fifth, at least 64 MiB, at most half', () => {
    expect(writerRoom(300 * MIB)).toBe(64 * MIB);
    expect(writerRoom(100 * MIB)).toBe(50 * MIB);
    expect(writerRoom(5000 * MIB)).toBe(1000 * MIB);
  });

  it('given DuckDB messages, when classified, then shortages and invalidation are told apart from the rest', () => {
    expect(isMemoryShortageMessage('Out of Memory Error: failed to allocate data of size 4.0 KiB')).toBe(
      true,
    );
    expect(
      isMemoryShortageMessage(
        'TransactionContext Error: Failed to commit: failed to pin block of size 256.0 KiB (296.9 MiB/300.0 MiB used)',
      ),
    ).toBe(true);
    expect(isMemoryShortageMessage('TransactionContext Error: Catalog write-write conflict')).toBe(false);
    expect(
      isInvalidatedMessage(
        'FATAL Error: Failed: database has been invalidated because of a previous fatal error.',
      ),
    ).toBe(true);
    expect(isInvalidatedMessage('Out of Memory Error: failed to allocate data of size 4.0 KiB')).toBe(false);
  });
});

describe('the engine memory watch', () => {
  let duck: Duck;
  let dir: string;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'duck-memory-'));
    duck = await openDuck({
      file: path.join(dir, 'read.duckdb'),
      allowedDirectory: path.join(dir, 'files'),
      memoryLimit: '300MiB',
      tempDirectory: path.join(dir, 'tmp'),
    });
  });
  afterEach(async () => {
    await duck.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('given a 300 MiB limit, when the duck opens, then it knows the limit and stops queries 64 MiB short of it', () => {
    expect(duck.engineMemoryLimit).toBe(300 * MIB);
    expect(duck.engineMemoryCeiling).toBe(236 * MIB);
  });

  it('given a query whose unspillable memory grows past the ceiling, when it runs watched, then the watch stops it before DuckDB runs out', async () => {
    const pressures: MemoryPressure[] = [];
    const outcome = await duck.withReader(async (c) => {
      const cancel = duck.onMemoryPressure((pressure) => {
        pressures.push(pressure);
        c.interrupt();
      });
      try {
        await c.run(HEAVY);
        return 'finished';
      } catch (error) {
        return (error as Error).message.split('\n')[0];
      } finally {
        cancel();
      }
    });
    expect(pressures).toHaveLength(1);
    expect(pressures[0]).toMatchObject({ kind: 'engine', ceiling: 236 * MIB, limit: 300 * MIB });
    const held = (pressures[0] as { held: number }).held;
    expect(held).toBeGreaterThan(236 * MIB);
    expect(outcome).toMatch(/^INTERRUPT Error/);
  });

  it('given a sort far larger than the limit, when it runs watched, then it spills and finishes: sorts are not stopped', async () => {
    const pressures: MemoryPressure[] = [];
    const rows = await duck.withReader(async (c) => {
      const cancel = duck.onMemoryPressure((pressure) => pressures.push(pressure));
      try {
        const result = await c.runAndReadAll(
          'SELECT count(*) AS n FROM (SELECT md5(range::VARCHAR) || md5((range * 7)::VARCHAR) AS s FROM range(3500000) ORDER BY s)',
        );
        return result.getRowObjectsJS();
      } finally {
        cancel();
      }
    });
    expect(rows).toEqual([{ n: 3500000n }]);
    expect(pressures).toEqual([]);
  });

  it('given DuckDB reports the database invalidated to a read, when more failures follow, then the listener hears of it once, and a late listener at once', async () => {
    const heard: string[] = [];
    duck.onInvalidated((message) => heard.push(message));
    const fatal = 'FATAL Error: Failed: database has been invalidated because of a previous fatal error.';
    // The error as DuckDB would answer any statement after invalidating (injected: one cannot be caused on purpose).
    await expect(
      duck.withReader(async () => {
        throw new Error(fatal);
      }),
    ).rejects.toThrow(fatal);
    duck.noticeFailure(new Error(fatal));
    await expect(
      duck.withReader(async () => Promise.reject(new Error('Out of Memory Error: x'))),
    ).rejects.toThrow();
    expect(heard).toEqual([fatal]);
    expect(duck.invalidated).toBe(fatal);
    const late: string[] = [];
    duck.onInvalidated((message) => late.push(message));
    expect(late).toEqual([fatal]);
  });
});

describe('an analyst and a writer under a 300 MiB limit (sqlite)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { DUCKDB_MEMORY_LIMIT: '300MiB' });
  });
  afterAll(() => t.dispose());

  it('given an aggregate that would hold more than the writer leaves, when it runs over HTTP while skills are made, then it answers 1153 naming the room kept for writes, and every write is answered and read back', async () => {
    const heavy = t.http.post('/api/sql/query').send({ query: HEAVY });
    const names = Array.from({ length: 10 }, (_, i) => `made_beside_${i}`);
    const writes = (async () => {
      for (const name of names)
        await t.http
          .post('/api/projects/mindsdb/skills')
          .send({ skill: { name, type: 'text2sql', params: { database: 'files' } } })
          .expect(201);
    })();
    const [answer] = await Promise.all([heavy, writes]);
    expect(answer.body).toMatchObject({ type: 'error', error_code: 1153 });
    expect(answer.body.error_message).toMatch(
      /^The query was stopped to keep room for writes: the query engine's memory that cannot spill to disk reached \d+ MiB, past (236|150) MiB of DUCKDB_MEMORY_LIMIT \(300 MiB\)$/,
    );
    const listed = await t.http.get('/api/projects/mindsdb/skills').expect(200);
    expect((listed.body as { name: string }[]).map((s) => s.name).sort()).toEqual([...names].sort());
  });
});
