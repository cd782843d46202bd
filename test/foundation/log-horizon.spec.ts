import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openEventLog } from '../../src/eventlog/open';
import { logStart, type EventLog, type LogCursor } from '../../src/eventlog/types';
import { appendOn, freshPostgresDatabase, POSTGRES_ADMIN_URL, projectCreated } from '../support/postgres';

/** Reads until nothing more comes for a moment (or the deadline). */
const drain = async (log: EventLog, from: LogCursor, batch = 3) => {
  const names: string[] = [];
  let cursor = from;
  for (let empty = 0, until = Date.now() + 5000; empty < 3 && Date.now() < until;) {
    const read = await log.readAll(cursor, batch);
    if (read.events.length === 0) {
      empty++;
      await new Promise((r) => setTimeout(r, 20));
    } else empty = 0;
    names.push(...read.events.map((e) => (e.type === 'ProjectCreated' ? e.data.name : e.type)));
    cursor = read.cursor;
  }
  return { names, cursor };
};

/**
 * The tail reads behind every transaction of this database still running, so an event that took a
 * lower position but commits later is never skipped; transactions of other databases on the same
 * server cannot write this log and do not hold it back.
 */
describe('the PostgreSQL tail and transactions still running', () => {
  let log: EventLog;
  let url: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-horizon-'));
    const db = await freshPostgresDatabase();
    url = db.url;
    log = await openEventLog({ url, dataDir, clock: () => new Date() });
    cleanup = async () => {
      await log.close();
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  });
  afterAll(() => cleanup());

  const withOpenTransaction = async (
    connectionString: string,
    work: (client: pg.Client) => Promise<void>,
  ) => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      await client.query('BEGIN');
      await work(client);
    } finally {
      await client.end();
    }
  };

  it('given an append of this database not yet committed, when later appends commit, then the tail waits and reads every one once, the late one first', async () => {
    const { cursor: start } = await drain(log, logStart);
    await withOpenTransaction(url, async (late) => {
      await appendOn(late, 'late');
      for (const name of ['after_1', 'after_2', 'after_3'])
        await log.append(`project-${name}`, [projectCreated(name)], 0n);
      // Behind the open transaction: nothing of what committed after it is readable yet.
      expect((await log.readAll(start, 100)).events).toEqual([]);
      await late.query('COMMIT');
    });
    expect((await drain(log, start)).names).toEqual(['late', 'after_1', 'after_2', 'after_3']);
  });

  it('given a late append still open, when a restarted reader asks which positions it has read, then the answer waits for it and stops at it', async () => {
    const { cursor } = await drain(log, logStart);
    let floor: Promise<bigint> | undefined;
    await withOpenTransaction(url, async (late) => {
      await appendOn(late, 'floor_late');
      await log.append('project-floor_after', [projectCreated('floor_after')], 0n);
      floor = log.unreadFloor(cursor);
      await new Promise((r) => setTimeout(r, 200));
      await late.query('COMMIT');
    });
    const unread = await log.readPage({ after: cursor.position, limit: 100 });
    const late = unread.find((e) => e.type === 'ProjectCreated' && e.data.name === 'floor_late');
    expect(await floor).toBe(late!.meta.position);
    const { cursor: end } = await drain(log, cursor);
    expect(await log.unreadFloor(end)).toBe((await log.head()).position + 1n);
  });

  it('given a transaction open in another database, when an append commits here, then the tail reads it at once', async () => {
    const { cursor: start } = await drain(log, logStart);
    await withOpenTransaction(POSTGRES_ADMIN_URL, async (elsewhere) => {
      await elsewhere.query('SELECT pg_current_xact_id()');
      await log.append('project-beside', [projectCreated('beside')], 0n);
      const read = await log.readAll(start, 100);
      expect(read.events.map((e) => (e.type === 'ProjectCreated' ? e.data.name : e.type))).toEqual([
        'beside',
      ]);
      await elsewhere.query('ROLLBACK');
    });
  });

  it('given appends racing here and an append left open a while, when tailed all along in small batches, then each event is read exactly once', async () => {
    const { cursor: start } = await drain(log, logStart);
    const seen: string[] = [];
    let cursor = start;
    let writing = true;
    const tail = (async () => {
      while (writing) {
        const read = await log.readAll(cursor, 5);
        seen.push(...read.events.map((e) => (e.type === 'ProjectCreated' ? e.data.name : e.type)));
        cursor = read.cursor;
        if (read.events.length === 0) await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const expected: string[] = [];
    await withOpenTransaction(url, async (late) => {
      await appendOn(late, 'race_late');
      expected.push('race_late');
      await Promise.all(
        Array.from({ length: 8 }, async (_, writer) => {
          for (let i = 0; i < 15; i++) {
            const name = `race_${writer}_${i}`;
            expected.push(name);
            await log.append(`project-${name}`, [projectCreated(name)], 0n);
          }
        }),
      );
      await late.query('COMMIT');
    });
    writing = false;
    await tail;
    seen.push(...(await drain(log, cursor)).names);
    expect(seen[0]).toBe('race_late');
    expect([...seen].sort()).toEqual([...expected].sort());
  });
});
