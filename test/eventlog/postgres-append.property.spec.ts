/**
 * The PostgreSQL log appends with one statement (src/eventlog/postgresAppend.ts) rather than through
 * Emmett's appendToStream (the same function inside BEGIN … COMMIT). The promise: what it stores is
 * what Emmett stores, row for row, and Emmett reads it back the same; a stale expected version stores
 * nothing. Checked on generated batches against Emmett itself, on one fresh database.
 * Beside it, a kill check: metadata stored with the message id left in (which Emmett keeps in a
 * column of its own) is caught at the count `npm test` runs.
 */
import { JSONParser, type Event } from '@event-driven-io/emmett';
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import fc from 'fast-check';
import pg from 'pg';
import { appendWithOneStatement, type PreparedEvent } from '../../src/eventlog/postgresAppend';
import { freshPostgresDatabase } from '../support/postgres';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(40);

/** JSON as events carry it: nested objects and arrays, any text (quotes, backslashes, non-ASCII, NUL excluded: jsonb refuses it). */
const jsonText = fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => !s.includes('\u0000'));
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    jsonText,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(jsonText, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const eventOf = fc.record({
  type: fc.constantFrom('ProjectCreated', 'SkillCreated', 'Odd "type" \\ ü'),
  data: fc.dictionary(jsonText, jsonValue, { maxKeys: 5 }),
  extra: fc.dictionary(fc.constantFrom('actor', 'cause', 'recordedAt'), jsonText, { maxKeys: 3 }),
});

/** The rows of a stream as stored, without what differs by nature (ids, positions, times). */
const storedRows = async (db: pg.Pool, stream: string) => {
  const { rows } = await db.query(
    `SELECT m.stream_position::text, m.message_kind, m.partition, m.message_schema_version, m.message_type,
            m.message_data, m.message_metadata, m.is_archived, s.stream_type, s.stream_position::text AS stream_version
       FROM emt_messages m JOIN emt_streams s USING (stream_id, partition)
      WHERE m.stream_id = $1 ORDER BY m.stream_position`,
    [stream],
  );
  return rows as Record<string, unknown>[];
};

/**
 * The pool, but each event's metadata bound with its message id still in it (the kill check's bug):
 * the parameters are the ids, the data, the metadata, then the rest (postgresAppend.ts).
 */
const keepingMessageIds = (pool: pg.Pool) =>
  ({
    query: (config: pg.QueryConfig<unknown[]>) => {
      const [ids, data, metadata, ...rest] = config.values as [string[], string[], string[], ...unknown[]];
      const withIds = metadata.map((m, i) => JSON.stringify({ messageId: ids[i], ...JSON.parse(m) }));
      return pool.query({ ...config, values: [ids, data, withIds, ...rest] });
    },
  }) as unknown as pg.Pool;

describe('appending on PostgreSQL with one statement', () => {
  let url: string;
  let drop: () => Promise<void>;
  let db: pg.Pool;
  let emmett: ReturnType<typeof getPostgreSQLEventStore>;
  beforeAll(async () => {
    ({ url, drop } = await freshPostgresDatabase());
    emmett = getPostgreSQLEventStore(url, { schema: { autoMigration: 'CreateOrUpdate' } });
    await emmett.schema.migrate();
    db = new pg.Pool({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    await db.end();
    await emmett.close();
    await drop();
  });

  let round = 0;
  const batchesArb = fc.array(fc.array(eventOf, { minLength: 1, maxLength: 4 }), {
    minLength: 1,
    maxLength: 3,
  });
  type Batches = typeof batchesArb extends fc.Arbitrary<infer B> ? B : never;

  /** Appends the batches with one statement (on `pool`) and through Emmett: both store and read alike. */
  const storesAsEmmett = async (batches: Batches, pool: pg.Pool) => {
    round++;
    const [ours, theirs] = [`ours-${round}`, `theirs-${round}`];
    let version = 0n;
    for (const batch of batches) {
      const prepared: PreparedEvent[] = batch.map((e, i) => ({
        type: e.type,
        data: e.data,
        metadata: { messageId: `m-${round}-${version + BigInt(i)}`, ...e.extra },
      }));
      const appended = await appendWithOneStatement(pool, ours, prepared, version);
      const emmetts = await emmett.appendToStream(theirs, prepared as unknown as Event[], {
        expectedStreamVersion: version,
      });
      expect(appended?.nextStreamPosition).toBe(emmetts.nextExpectedStreamVersion);
      expect(appended?.globalPositions).toHaveLength(batch.length);
      version = emmetts.nextExpectedStreamVersion;
    }
    // Row for row, the same (the stream type is the name's part before the dash: both "ours" or
    // "theirs", so compared apart).
    const [a, b] = [await storedRows(db, ours), await storedRows(db, theirs)];
    expect(a.map((r) => r.stream_type)).toEqual(a.map(() => 'ours'));
    expect(b.map((r) => r.stream_type)).toEqual(b.map(() => 'theirs'));
    const strip = (rows: Record<string, unknown>[]) => rows.map(({ stream_type: _t, ...rest }) => rest);
    expect(strip(a)).toEqual(strip(b));
    // And read through Emmett: the same events.
    const [readA, readB] = [await emmett.readStream(ours), await emmett.readStream(theirs)];
    expect(JSONParser.stringify(readA.events.map((e) => [e.type, e.data]))).toBe(
      JSONParser.stringify(readB.events.map((e) => [e.type, e.data])),
    );
    expect(readA.currentStreamVersion).toBe(readB.currentStreamVersion);
  };

  it('stores what Emmett stores and Emmett reads it back alike, batch after batch', async () => {
    await fc.assert(
      fc.asyncProperty(batchesArb, (batches) => storesAsEmmett(batches, db)),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('kill check: metadata stored with the message id left in is caught', async () => {
    await expectCaught(
      fc.asyncProperty(batchesArb, (batches) => storesAsEmmett(batches, keepingMessageIds(db))),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('given a stale expected version (a new stream that exists, an older version), then refuses and stores nothing', async () => {
    const event = (id: string): PreparedEvent => ({
      type: 'ProjectCreated',
      data: { id },
      metadata: { messageId: id },
    });
    expect(await appendWithOneStatement(db, 'stale-1', [event('a'), event('b')], 0n)).toMatchObject({
      nextStreamPosition: 2n,
    });
    // Expecting a new stream: the stream's row exists (a unique key), as Emmett's path fails too.
    await expect(appendWithOneStatement(db, 'stale-1', [event('c')], 0n)).rejects.toMatchObject({
      code: '23505',
    });
    // Expecting version 1 of a stream at 2: refused by the function.
    expect(await appendWithOneStatement(db, 'stale-1', [event('d')], 1n)).toBeNull();
    expect(await appendWithOneStatement(db, 'stale-1', [], 2n)).toBeNull();
    const rows = await storedRows(db, 'stale-1');
    expect(rows.map((r) => (r.message_data as { id: string }).id)).toEqual(['a', 'b']);
    expect(rows.map((r) => r.stream_version)).toEqual(['2', '2']);
  });
});
