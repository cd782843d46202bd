import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ProjectCreated } from '../../events';
import { openEventLog } from '../../src/eventlog/open';
import { logStart, StreamVersionConflict, type EventLog } from '../../src/eventlog/types';
import { freshPostgresDatabase } from '../support/postgres';
import { storeKinds } from '../support/app';

const created = (name: string): ProjectCreated => ({
  type: 'ProjectCreated',
  data: { name, createdAt: new Date().toISOString() },
});

describe.each(storeKinds)('the event log on %s', (store) => {
  let log: EventLog;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-log-'));
    const pg = store === 'postgres' ? await freshPostgresDatabase() : undefined;
    log = await openEventLog({ url: pg?.url, dataDir, clock: () => new Date() });
    cleanup = async () => {
      await log.close();
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  });
  afterAll(() => cleanup());

  it('appends with optimistic concurrency: a stale expected version writes nothing', async () => {
    const first = await log.append('project-occ', [created('occ')], 0n);
    expect(first.streamVersion).toBe(1n);
    expect(first.events[0]).toMatchObject({
      type: 'ProjectCreated',
      meta: { position: first.lastPosition, streamPosition: 1n },
    });
    const conflict = await log.append('project-occ', [created('occ')], 0n).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(StreamVersionConflict);
    const { events, version } = await log.readStream('project-occ', 0n);
    expect(version).toBe(1n);
    expect(events).toHaveLength(1);
    expect(events[0]!.meta.eventId).toBe(first.events[0]!.meta.eventId);
  });

  it('reads the whole log back exactly once, in order, across many concurrent writers and small batches', async () => {
    // The log shared by this file's tests: what they appended before this one is read back too.
    const before = (await log.readPage({ after: 0n, limit: 10_000 })).length;

    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        log.append(
          `project-c${i}`,
          i % 3 === 0 ? [created(`c${i}`), created(`c${i}`)] : [created(`c${i}`)],
          0n,
        ),
      ),
    );
    const expected = before + 40 + 14;
    // On PostgreSQL the tail stops before any transaction of this database still running: an empty
    // batch means "nothing more yet", so read until every event has come, within a deadline.
    const seen: bigint[] = [];
    let cursor = logStart;
    for (const until = Date.now() + 20_000; seen.length < expected && Date.now() < until;) {
      const batch = await log.readAll(cursor, 7);
      if (batch.events.length === 0) await new Promise((r) => setTimeout(r, 50));
      seen.push(...batch.events.map((e) => e.meta.position));
      cursor = batch.cursor;
    }
    const page = await log.readPage({ after: 0n, limit: 10_000 });
    const all = page.map((e) => e.meta.position);
    expect(all).toEqual([...all].sort((a, b) => (a < b ? -1 : 1)));
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort((a, b) => (a < b ? -1 : 1))).toEqual(all);
    expect(all.length).toBe(expected);
  });
});
