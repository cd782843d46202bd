import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import sqlite3 from 'sqlite3';
import { MAY_HOLD_LONE_SURROGATE } from '../../src/eventlog/registry';
import { openSqliteLog } from '../../src/eventlog/sqlite';
import type { NewEvent } from '../../src/eventlog/types';
import type { RequestContext } from '../../src/shared/requestContext';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';

// The embedded log reads a page of the log (replay, verify, audits) as one JSON text SQLite builds
// of the page's rows. The promise: every page so read holds exactly the events its rows give read one
// by one (each stored text parsed as every reader parses it, lone surrogates made well-formed; the
// metadata and positions as the contract describes them), whatever was appended and by whom, from
// any position, in pages of any size, of one stream or all; and so do rows an older log holds (a
// lone surrogate) or a hand edited outside the service (a text that is not JSON fails the read, as it
// did; a blob, metadata that is not an object, whitespace around a text read as they did).
// Beside it, a kill check: a read that leaves a stored text's lone surrogates in is caught.

const clock = () => new Date('2026-01-01T00:00:00.000Z');

// LONE marks where a stored text gets a lone surrogate (an older log's), by an edit of the row.
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 10 }).map((s) => s.split('\u0000').join('').toWellFormed()),
  fc.constantFrom(
    '',
    'LONE',
    'a LONE b',
    "it's",
    'back\\slash',
    'line\nbreak',
    '😀',
    '{"json":"text"}',
    ',]',
  ),
);
const jsonValue = fc.oneof(
  text,
  fc.constantFrom(-0, 1e21, 5e-324, 2 ** 53 + 1, 0.1 + 0.2, true, false, null),
  fc.integer(),
  fc.array(fc.oneof(text, fc.integer(), fc.constant(null)), { maxLength: 3 }),
);
const skillCreated = fc
  .record({ name: text, params: fc.dictionary(text, jsonValue, { maxKeys: 3 }) })
  .map(({ name, params }): NewEvent => ({
    type: 'SkillCreated',
    data: { projectId: 1, project: 'p', name, type: 'text', params, createdAt: '2026-01-01T00:00:00.000Z' },
  }));
const cause: fc.Arbitrary<RequestContext | undefined> = fc.option(
  fc.record(
    {
      requestId: fc.constantFrom('req-1', 'req LONE'),
      interface: fc.constantFrom('rest' as const, 'sql' as const),
      actor: fc.record({ kind: fc.constant('user' as const), id: text }),
    },
    { requiredKeys: ['requestId', 'interface'] },
  ),
  { nil: undefined },
);

const append = fc.record({
  stream: fc.constantFrom('project-a', 'project-b', 'project-LONE'),
  events: fc.array(fc.tuple(skillCreated, cause), { minLength: 1, maxLength: 4 }),
});

/** Edits of a stored row made outside the service (SQL on the file). */
const EDITS = {
  lone: `SET message_data = replace(message_data, 'LONE', '\\ud800'),
             message_metadata = replace(message_metadata, 'LONE', '\\udc00 \\udbff')`,
  spaced: `SET message_data = ' ' || message_data || char(10)`,
  metadataNull: `SET message_metadata = 'null'`,
  metadataNumber: `SET message_metadata = '0.30000000000000004'`,
  metadataText: `SET message_metadata = '"LONE"'`,
  dataBlob: `SET message_data = CAST(message_data AS BLOB)`,
  notOneValue: `SET message_data = '{"a":1},{"b":2}'`,
} as const;
const edit = fc.record({
  row: fc.nat(),
  kind: fc.constantFrom(...(Object.keys(EDITS) as (keyof typeof EDITS)[])),
});
// Mostly lone surrogates (what an older log holds), as many rows as the log has; at least one, so
// that a run of 40 edits some row (with no edit at all, one in five runs read an untouched log and a
// seed could draw too few lone surrogates for the kill check below: seed 2036831314 caught nothing).
const edits = fc.array(
  fc.oneof({ weight: 3, arbitrary: edit.map((e) => ({ ...e, kind: 'lone' as const })) }, edit),
  {
    minLength: 1,
    maxLength: 4,
  },
);

const read = fc.record({
  after: fc.nat({ max: 20 }),
  limit: fc.integer({ min: 1, max: 12 }),
  stream: fc.option(fc.constantFrom('project-a', 'project-b', 'project-LONE'), { nil: undefined }),
});

type Row = {
  stream_id: string;
  stream_position: number;
  global_position: number;
  message_data: string | Buffer;
  message_metadata: unknown;
  message_type: string;
  message_id: string;
};

/** A parsed value with every lone surrogate (in a string or a key) replaced by U+FFFD. */
const wellFormed = (v: unknown): unknown =>
  typeof v === 'string'
    ? v.toWellFormed()
    : Array.isArray(v)
      ? v.map(wellFormed)
      : typeof v === 'object' && v !== null
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toWellFormed(), wellFormed(x)]))
        : v;

/** A stored text (a blob's bytes as UTF-8) as every reader reads it. */
const parsed = (text: unknown) => wellFormed(JSON.parse(String(text)));

/** An event as the contract reads its row: what every reader of the log must get. */
const eventOf = (row: Row) => {
  const stored = parsed(row.message_metadata);
  const m = (typeof stored === 'object' && stored !== null ? stored : {}) as Record<string, unknown>;
  return {
    type: row.message_type,
    data: parsed(row.message_data),
    meta: {
      position: BigInt(row.global_position),
      stream: row.stream_id,
      streamPosition: BigInt(row.stream_position),
      eventId: row.message_id,
      recordedAt: m.recordedAt ?? '',
      schemaVersion: m.schemaVersion ?? 1,
      ...(m.actor !== undefined ? { actor: m.actor } : {}),
      ...(m.requestId !== undefined ? { requestId: m.requestId } : {}),
      ...(m.via !== undefined ? { via: m.via } : {}),
    },
  };
};

const sql = <T>(db: sqlite3.Database, query: string) =>
  new Promise<T[]>((resolve, reject) => db.all(query, (e, rows: T[]) => (e ? reject(e) : resolve(rows))));

type Append = typeof append extends fc.Arbitrary<infer A> ? A : never;

/** Appends, edits rows, then reads pages: each equals its rows read one by one (or fails as they do). */
const pagesAsRows = async (
  appends: Append[],
  editsMade: { row: number; kind: keyof typeof EDITS }[],
  reads: { after: number; limit: number; stream?: string }[],
) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-pages-'));
  const file = path.join(dir, 'events.sqlite');
  const log = await openSqliteLog(file, clock);
  const versions = new Map<string, bigint>();
  try {
    for (const a of appends) {
      const result = await log.append(
        a.stream,
        a.events.map(([e]) => e),
        versions.get(a.stream) ?? 0n,
        a.events.map(([, c]) => c),
      );
      versions.set(a.stream, result.streamVersion);
    }
  } finally {
    await log.close();
  }
  const db = new sqlite3.Database(file);
  let rows: Row[];
  try {
    const total = appends.reduce((n, a) => n + a.events.length, 0);
    for (const e of editsMade)
      await sql(db, `UPDATE emt_messages ${EDITS[e.kind]} WHERE global_position = ${(e.row % total) + 1}`);
    rows = await sql<Row>(db, 'SELECT * FROM emt_messages ORDER BY global_position');
  } finally {
    await new Promise((resolve) => db.close(resolve));
  }
  // Opened again, the log holds nothing in memory: every read is a query.
  const stored = await openSqliteLog(file, clock);
  try {
    for (const r of reads) {
      const selected = rows.filter(
        (row) => row.global_position > r.after && (!r.stream || row.stream_id === r.stream),
      );
      const page = selected.slice(0, r.limit);
      const expected = (() => {
        try {
          return { events: page.map(eventOf) };
        } catch (error) {
          return { error };
        }
      })();
      const asRead = [
        stored.readPage({ after: BigInt(r.after), limit: r.limit, stream: r.stream }),
        ...(r.stream
          ? []
          : [
              stored
                .readAll({ position: BigInt(r.after), transactionId: null }, r.limit)
                .then((b) => b.events),
            ]),
      ];
      for (const events of asRead)
        if ('events' in expected) expect(await events).toStrictEqual(expected.events);
        else await expect(events).rejects.toThrow(SyntaxError);
    }
  } finally {
    await stored.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

const property = () =>
  fc.asyncProperty(
    fc.array(append, { minLength: 1, maxLength: 6 }),
    edits,
    fc.array(read, { minLength: 1, maxLength: 4 }),
    pagesAsRows,
  );

describe('the embedded log, read a page at a time', () => {
  it('reads each page as its rows read one by one', async () => {
    await fc.assert(property(), { seed: propertySeed(), numRuns: propertyRuns(40) });
  });

  it('kill check: a read that leaves lone surrogates in is caught', async () => {
    // Every stored text taken for one holding no lone surrogate (the test that sends it to repair).
    const spy = jest.spyOn(MAY_HOLD_LONE_SURROGATE, 'test').mockReturnValue(false);
    try {
      await expectCaught(property(), { seed: propertySeed(), numRuns: propertyRuns(40) });
    } finally {
      spy.mockRestore();
    }
  });
});
