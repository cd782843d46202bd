/**
 * DuckDB's pooled readers are made as reads first need them, up to the configured number
 * (src/duckdb/database.ts): a start makes one; concurrent reads get distinct connections until all
 * are lent, and the next waits for one to come back; a reader still being made when the pool
 * closes is closed with it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDuck, type Duck } from '../../src/duckdb/database';

const openIn = (readers: number, acquireTimeoutMs = 10_000) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'duck-readers-'));
  return {
    dir,
    opened: openDuck({
      file: path.join(dir, 'read.duckdb'),
      allowedDirectory: path.join(dir, 'files'),
      readers,
      acquireTimeoutMs,
    }),
  };
};

/** Holds a reader until released; says which connection it got and that its macros are there. */
const hold = (duck: Duck) => {
  let release = () => {};
  const released = new Promise<void>((r) => (release = r));
  const got = new Promise<{ connection: unknown; macro: unknown }>((resolve, reject) => {
    duck
      .withReader(async (c) => {
        // A MySQL function macro (src/duckdb/mysqlFunctions.ts) answers on every reader.
        const rows = (await c.runAndReadAll("SELECT ifnull(NULL, 'made') AS m")).getRowObjectsJS();
        resolve({ connection: c, macro: rows[0]?.m });
        await released;
      })
      .catch(reject);
  });
  return { got, release };
};

describe('the pooled DuckDB readers', () => {
  let duck: Duck;
  let dir: string;
  afterEach(async () => {
    await duck?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('given 3 readers, when 3 reads hold one each, then they are 3 distinct connections with the macros, and a 4th waits for one to come back', async () => {
    const o = openIn(3);
    dir = o.dir;
    duck = await o.opened;
    const held = [hold(duck), hold(duck), hold(duck)];
    const got = await Promise.all(held.map((h) => h.got));
    expect(new Set(got.map((g) => g.connection)).size).toBe(3);
    expect(got.map((g) => g.macro)).toEqual(['made', 'made', 'made']);
    const fourth = hold(duck);
    const early = await Promise.race([
      fourth.got.then(() => 'served'),
      new Promise((r) => setTimeout(() => r('waiting'), 150)),
    ]);
    expect(early).toBe('waiting');
    held[1]!.release();
    const served = await fourth.got;
    expect(served.connection).toBe(got[1]!.connection);
    fourth.release();
    held[0]!.release();
    held[2]!.release();
  });

  it('given a pool closing while a reader is being made, then the read is refused and the pool closes whole', async () => {
    const o = openIn(4);
    dir = o.dir;
    duck = await o.opened;
    const first = hold(duck);
    await first.got;
    // The second read makes a new reader; the pool stops before that read runs.
    const second = duck.withReader(async () => 'ran');
    const closing = duck.close();
    first.release();
    await expect(second).rejects.toThrow('The server is shutting down');
    await closing;
    duck = undefined as unknown as Duck;
  });
});
