/**
 * Appends called together to distinct streams are written with a few statements of our own rather
 * than Emmett's two per append (src/eventlog/sqlite.ts, `appendInFewStatements`). The promise: the
 * log's tables end byte for byte as Emmett 0.42 leaves them when each append runs alone — every
 * column of every stream row (Emmett's partition text included) and of every event row (its data
 * and metadata texts, key order included), but the random message ids and the insertion clock.
 * Its kill check: the same comparison, given a log whose stream rows name the partition the events
 * do (what a plausible rewrite of Emmett's SQL writes), fails.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import sqlite3 from 'sqlite3';
import { openSqliteLog } from '../../src/eventlog/sqlite';
import type { NewEvent } from '../../src/eventlog/types';
import { propertyRuns, propertySeed } from '../support/seed';

const SETTINGS = { seed: propertySeed(), numRuns: propertyRuns(25) };

type Append = { stream: number; notes: string[] };

const append: fc.Arbitrary<Append> = fc.record({
  stream: fc.nat({ max: 5 }),
  notes: fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.constant('\u00e9\u{1F600}\'"\\')), {
    minLength: 1,
    maxLength: 3,
  }),
});

const run = fc.record({
  appends: fc.array(append, { minLength: 1, maxLength: 24 }),
  waves: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 10 }),
});

const eventsOf = (a: Append, i: number): NewEvent[] =>
  a.notes.map((note, j) => ({
    type: 'SkillCreated',
    data: {
      projectId: a.stream,
      project: `p${a.stream}`,
      name: `s${i}_${j}`,
      type: 'custom',
      params: { note },
      createdAt: '2026-11-28T00:00:00.000Z',
    },
  }));

const query = (file: string, sql: string) =>
  new Promise<Record<string, unknown>[]>((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (error) => {
      if (error) return reject(error);
      db.all(sql, (e, rows) => db.close(() => (e ? reject(e) : resolve(rows as Record<string, unknown>[]))));
    });
  });

/** Every column of both tables, the random message ids (and the clock's insertion time) left out. */
const tablesOf = async (file: string) => ({
  streams: await query(file, 'SELECT * FROM emt_streams ORDER BY stream_id'),
  messages: (await query(file, 'SELECT * FROM emt_messages ORDER BY global_position')).map(
    ({ message_id, created: _created, ...row }) => ({
      ...row,
      message_metadata: String(row.message_metadata).replace(String(message_id), '<id>'),
    }),
  ),
});

const openLog = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-sqlite-rows-'));
  const file = path.join(dir, 'events.sqlite');
  const log = await openSqliteLog(file, () => new Date('2026-11-28T00:00:00Z'));
  return { log, file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
};

/** The appends one after another (each alone: Emmett's statements) and in waves (grouped). */
const bothWays = async ({ appends, waves }: { appends: Append[]; waves: number[] }) => {
  const alone = await openLog();
  const together = await openLog();
  const versions = new Map<number, bigint>();
  const expected: bigint[] = [];
  for (const [i, a] of appends.entries()) {
    const current = versions.get(a.stream) ?? 0n;
    expected.push(current);
    versions.set(
      a.stream,
      (await alone.log.append(`skills-${a.stream}`, eventsOf(a, i), current)).streamVersion,
    );
  }
  let next = 0;
  for (let w = 0; next < appends.length; w++) {
    const size = waves[w % waves.length]!;
    // Distinct streams within a wave, as the runner's per-stream queue calls them.
    const wave: Promise<unknown>[] = [];
    const streams = new Set<number>();
    while (next < appends.length && wave.length < size && !streams.has(appends[next]!.stream)) {
      const a = appends[next]!;
      streams.add(a.stream);
      wave.push(together.log.append(`skills-${a.stream}`, eventsOf(a, next), expected[next]!));
      next++;
    }
    await Promise.all(wave);
  }
  await alone.log.close();
  await together.log.close();
  return { alone, together };
};

describe('the SQLite log’s grouped appends', () => {
  it('given appends to distinct streams called together, then the tables hold the rows Emmett writes for each alone', async () => {
    await fc.assert(
      fc.asyncProperty(run, async (generated) => {
        const { alone, together } = await bothWays(generated);
        try {
          expect(await tablesOf(together.file)).toEqual(await tablesOf(alone.file));
        } finally {
          alone.remove();
          together.remove();
        }
      }),
      SETTINGS,
    );
  }, 120_000);

  it('kill check: stream rows written with the events’ partition are caught by the same comparison', async () => {
    const { alone, together } = await bothWays({
      appends: [
        { stream: 0, notes: ['a'] },
        { stream: 1, notes: ['b'] },
      ],
      waves: [2],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const db = new sqlite3.Database(together.file, (error) => {
          if (error) return reject(error);
          db.run("UPDATE emt_streams SET partition = 'emt:default'", (e) =>
            db.close(() => (e ? reject(e) : resolve())),
          );
        });
      });
      expect(await tablesOf(together.file)).not.toEqual(await tablesOf(alone.file));
      // The comparison is otherwise blind to nothing that matters: the events are still the same.
      expect((await tablesOf(together.file)).messages).toEqual((await tablesOf(alone.file)).messages);
    } finally {
      alone.remove();
      together.remove();
    }
  });
});
