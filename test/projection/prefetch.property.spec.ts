/**
 * A batch's row store reads ahead the keys a batch will look up (`prefetch`, used by the history
 * of AS OF tables: src/projection/history.ts), a thousand keys a query. The promise: `get` answers
 * the same with or without it, whatever the table holds, whichever keys are asked (absent ones,
 * repeated ones, ones the batch already changed), and the batch then writes the same table.
 * Beside it, a kill check: a read-ahead that pairs the keys asked with the rows found in the order
 * DuckDB answers them (not by key) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { BatchRowStore } from '../../src/projection/rows';
import type { Row } from '../../src/projection/types';
import { keyedTable } from '../support/projection';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(12);

const projection = keyedTable('prefetched', [
  { name: 'ID', type: 'BIGINT' },
  { name: 'V', type: 'VARCHAR' },
]);

const key = fc.integer({ min: 1, max: 1400 });
const world = fc
  .record({
    stored: fc.uniqueArray(key, { maxLength: 1400, size: 'large' }),
    // Before reading: some keys changed by the batch itself.
    changed: fc.array(fc.record({ key, deleted: fc.boolean() }), { maxLength: 20 }),
    others: fc.array(key, { maxLength: 400, size: 'large' }),
  })
  // Asked: keys the table holds (over a thousand at times: several read-ahead queries) and others.
  .chain((w) =>
    fc
      .shuffledSubarray([...w.stored, ...w.others])
      .map((asked) => ({ stored: w.stored, changed: w.changed, asked })),
  );
type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

/** A store whose read-ahead pairs the keys asked with the rows found in answer order (the kill check's bug). */
class PairedByOrder extends BatchRowStore {
  constructor(private readonly c: DuckDBConnection) {
    super(projection, c);
  }
  override async prefetch(keys: readonly string[]) {
    const wanted = [...new Set(keys)];
    if (!wanted.length) return;
    const rows = (
      await this.c.runAndReadAll(
        `SELECT * FROM prefetched WHERE ID IN (${wanted.map(() => '?').join(', ')})`,
        wanted,
      )
    ).getRowObjectsJS() as Row[];
    wanted.forEach((k, i) => this.readAhead.set(k, rows[i]));
  }
}

describe('a batch row store reading ahead', () => {
  let db: DuckDBInstance;
  let c: DuckDBConnection;
  beforeAll(async () => {
    db = await DuckDBInstance.create(':memory:');
    c = await db.connect();
  });
  afterAll(() => {
    c.closeSync();
    db.closeSync();
  });

  /** What each asked key's `get` answers, then the table after the batch's flush. */
  const runBatch = async (w: World, store: BatchRowStore, readingAhead: boolean) => {
    await c.run('CREATE OR REPLACE TABLE prefetched (ID BIGINT, V VARCHAR)');
    if (w.stored.length)
      await c.run(`INSERT INTO prefetched VALUES ${w.stored.map((k) => `(${k}, 'v${k}')`).join(', ')}`);
    for (const ch of w.changed)
      if (ch.deleted) store.delete(String(ch.key));
      else store.put({ ID: BigInt(ch.key), V: `changed ${ch.key}` });
    const keys = w.asked.map(String);
    if (readingAhead) await store.prefetch(keys);
    const answers: (Row | undefined)[] = [];
    for (const k of keys) {
      const row = await store.get(k);
      answers.push(row);
      // A projection changing what it read: a later read of the key must not see it.
      if (row) row.V = 'mutated by a reader';
    }
    for (const k of keys.slice(0, 5)) store.put({ ID: BigInt(k), V: `put ${k}` });
    await store.flush();
    const table = (await c.runAndReadAll('SELECT ID, V FROM prefetched ORDER BY ID')).getRowsJS();
    return JSON.stringify(
      { answers: answers.map((r) => (r ? [String(r.ID), r.V] : null)), table },
      (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v),
    );
  };

  const sameAsWithout = async (w: World, store: () => BatchRowStore) =>
    (await runBatch(w, store(), true)) === (await runBatch(w, new BatchRowStore(projection, c), false));

  it('answers every get as without it, and writes the same table', async () => {
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        expect(await sameAsWithout(w, () => new BatchRowStore(projection, c))).toBe(true);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('kill check: rows paired with the keys asked by answer order, not by key, are caught', async () => {
    await expectCaught(
      fc.asyncProperty(world, async (w) => sameAsWithout(w, () => new PairedByOrder(c))),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
