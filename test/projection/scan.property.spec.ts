/**
 * A batch's row store finds the rows a projection asks for by their cells (`scan`: a model's
 * versions, the chatbots of one agent, the agents listing one skill), the condition read by the
 * table itself. The promise: it answers exactly the current rows that match — the table's rows with
 * this batch's puts, inserts and deletes over them, a null asked as "is null", a list column
 * matched when it holds the value — in key order, whatever the table holds and the batch changed.
 * The reference is the rows kept in memory beside the batch; the same holds when the runner's
 * committed rows hold the table whole and answer the scan instead of a query. Beside it, a kill
 * check: a scan that reads the table alone, forgetting the batch's own changes, is caught at the
 * count `npm test` runs.
 */
import fc from 'fast-check';
import type { DuckDBConnection } from '@duckdb/node-api';
import { CommittedRows } from '../../src/projection/committedRows';
import { BatchRowStore, cellsMatcher, storedRow } from '../../src/projection/rows';
import type { Row } from '../../src/projection/types';
import { quoteIdent } from '../../src/shared/quoting';
import { inMemoryConnection } from '../support/memoryDuck';
import { keyedTable } from '../support/projection';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(20);

const projection = keyedTable('scanned', [
  { name: 'ID', type: 'BIGINT' },
  { name: 'OWNER', type: 'BIGINT' },
  { name: 'NAME', type: 'VARCHAR' },
  { name: 'TAGS', type: 'BIGINT[]' },
]);

// Small domains, so that most conditions match some rows.
const id = fc.integer({ min: 1, max: 12 });
const cells = fc.record({
  OWNER: fc.option(fc.integer({ min: 1, max: 4 }), { freq: 4 }),
  NAME: fc.constantFrom('a', 'b', "o'b", 'é'),
  TAGS: fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { maxLength: 3 }),
});
const row = (key: number, c: { OWNER: number | null; NAME: string; TAGS: number[] }): Row => ({
  ID: BigInt(key),
  OWNER: c.OWNER === null ? null : BigInt(c.OWNER),
  NAME: c.NAME,
  TAGS: c.TAGS.map(BigInt),
});
const change = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), key: id, cells }),
  fc.record({ kind: fc.constant('insert' as const), key: fc.integer({ min: 13, max: 20 }), cells }),
  fc.record({ kind: fc.constant('delete' as const), key: id }),
);
const where = fc.oneof(
  fc.integer({ min: 1, max: 4 }).map((o): Row => ({ OWNER: BigInt(o) })),
  fc.constant<Row>({ OWNER: null }),
  fc.integer({ min: 1, max: 5 }).map((t): Row => ({ TAGS: BigInt(t) })),
  fc
    .tuple(fc.integer({ min: 1, max: 4 }), fc.constantFrom('a', 'b', "o'b", 'é'))
    .map(([o, n]): Row => ({ OWNER: BigInt(o), NAME: n })),
);
const world = fc.record({
  stored: fc.uniqueArray(fc.tuple(id, cells), { selector: ([k]) => k, maxLength: 12 }),
  changes: fc.array(change, { maxLength: 30, size: 'medium' }),
  asked: fc.array(where, { minLength: 1, maxLength: 4 }),
});
type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

/** The kill check's bug: the table's matching rows, without this batch's changes over them. */
class TableOnly extends BatchRowStore {
  constructor(private readonly c: DuckDBConnection) {
    super(projection, c);
  }
  override async scan(where: Row) {
    const all = (
      await this.c.runAndReadAll('SELECT * FROM scanned ORDER BY ID::VARCHAR')
    ).getRowObjectsJS() as Row[];
    return all.filter(cellsMatcher(projection, where));
  }
}

const text = (rows: readonly Row[]) =>
  JSON.stringify(rows, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

describe('a batch row store finding rows by their cells', () => {
  const connection = inMemoryConnection();

  /** Given the table's rows and the batch's changes, whether every scan answers what memory holds. */
  const answersAsMemory = async (w: World, store: BatchRowStore) => {
    const c = connection();
    await c.run(
      `CREATE OR REPLACE TABLE ${quoteIdent(projection.table)} (ID BIGINT, OWNER BIGINT, NAME VARCHAR, TAGS BIGINT[])`,
    );
    const memory = new Map<string, Row>();
    for (const [key, cs] of w.stored) {
      const owner = cs.OWNER === null ? 'NULL' : String(cs.OWNER);
      const name = `'${cs.NAME.replaceAll("'", "''")}'`;
      await c.run(
        `INSERT INTO scanned VALUES (${key}, ${owner}, ${name}, [${cs.TAGS.join(', ')}]::BIGINT[])`,
      );
      memory.set(String(key), storedRow(projection, row(key, cs)));
    }
    for (const ch of w.changes) {
      if (ch.kind === 'delete') {
        store.delete(BigInt(ch.key));
        memory.delete(String(ch.key));
      } else if (ch.kind === 'insert' && !memory.has(String(ch.key))) {
        store.insert(row(ch.key, ch.cells));
        memory.set(String(ch.key), storedRow(projection, row(ch.key, ch.cells)));
      } else {
        store.put(row(ch.key, ch.cells));
        memory.set(String(ch.key), storedRow(projection, row(ch.key, ch.cells)));
      }
    }
    for (const asked of w.asked) {
      const expected = [...memory.keys()]
        .sort()
        .map((k) => memory.get(k)!)
        .filter(cellsMatcher(projection, asked));
      if (text(await store.scan(asked)) !== text(expected)) return false;
    }
    return true;
  };

  it('answers the current matching rows in key order, the batch over the table', async () => {
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        expect(await answersAsMemory(w, new BatchRowStore(projection, connection()))).toBe(true);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('answers the same when the runner’s committed rows hold the table whole (read at the first scan) or it is too large for them', async () => {
    await fc.assert(
      fc.asyncProperty(world, fc.constantFrom(3, 64), async (w, perTable) => {
        const store = new BatchRowStore(projection, connection(), new CommittedRows(perTable));
        expect(await answersAsMemory(w, store)).toBe(true);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('keeps a further filter and a condition no row meets apart', async () => {
    const c = connection();
    await c.run('CREATE OR REPLACE TABLE scanned (ID BIGINT, OWNER BIGINT, NAME VARCHAR, TAGS BIGINT[])');
    await c.run("INSERT INTO scanned VALUES (1, 7, 'a', [1]), (2, 7, 'b', [2]), (3, 8, 'a', [])");
    const store = new BatchRowStore(projection, c);
    store.put({ ID: 4n, OWNER: 7n, NAME: 'A', TAGS: [] });
    const names = (rows: Row[]) => rows.map((r) => r.NAME);
    expect(names(await store.scan({ OWNER: 7n }))).toEqual(['a', 'b', 'A']);
    expect(names(await store.scan({ OWNER: 7n }, (r) => String(r.NAME).toLowerCase() === 'a'))).toEqual([
      'a',
      'A',
    ]);
    expect(await store.scan({ OWNER: 9n })).toEqual([]);
    await expect(store.scan({ NOPE: 1 })).rejects.toThrow('scanned has no column NOPE');
  });

  it('kill check: a scan that forgets the batch over the table is caught', async () => {
    await expectCaught(
      fc.asyncProperty(world, async (w) => answersAsMemory(w, new TableOnly(connection()))),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
