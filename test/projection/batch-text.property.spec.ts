import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { CommittedRows } from '../../src/projection/committedRows';
import { BatchRowStore, createTableSql } from '../../src/projection/rows';
import type { Row, TableProjection } from '../../src/projection/types';
import { keyedTable } from '../support/projection';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

// Two promises of the batch writer, over generated rows of every column type:
// - a small batch written as SQL text stores exactly what the appender stores (the literal path is
//   an optimisation, never a change of data);
// - a row remembered from a committed batch reads the same as the row read back from the table
//   (cache equals uncached).
// Beside them, a kill check: SQL text that leaves out the DELETE of the batch's touched keys is
// caught at the count `npm test` runs.

const columnsOf = (table: string): TableProjection =>
  keyedTable(table, [
    { name: 'ID', type: 'BIGINT' },
    { name: 'NAME', type: 'VARCHAR' },
    { name: 'DOC', type: 'JSON' },
    { name: 'BIG', type: 'BIGINT' },
    { name: 'SMALL', type: 'INTEGER' },
    { name: 'REAL', type: 'DOUBLE' },
    { name: 'FLAG', type: 'BOOLEAN' },
    { name: 'AT', type: 'TIMESTAMP' },
    { name: 'TAGS', type: 'VARCHAR[]' },
    { name: 'IDS', type: 'BIGINT[]' },
  ]);

const tricky = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom("'", "''", "a'b", '\\', '\\n', '\n', '"', '; DROP TABLE x; --', '$1', '?', '😀', ''),
);
const jsonValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).filter((v) => typeof v !== 'string'),
  fc.dictionary(tricky, tricky, { maxKeys: 3 }),
);
const cell = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 6 });
const rowArb = (id: number) =>
  fc.record({
    ID: fc.constant(BigInt(id)),
    NAME: cell(tricky),
    DOC: cell(jsonValue),
    BIG: cell(fc.bigInt({ min: -(2n ** 63n) + 1n, max: 2n ** 63n - 1n })),
    SMALL: cell(fc.integer({ min: -2_147_483_647, max: 2_147_483_647 })),
    REAL: cell(
      fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0.1, -0, 1e21, 5e-324)),
    ),
    FLAG: cell(fc.boolean()),
    AT: cell(
      fc.date({
        min: new Date('1900-01-01T00:00:00Z'),
        max: new Date('2200-01-01T00:00:00Z'),
        noInvalidDate: true,
      }),
    ),
    TAGS: cell(fc.array(tricky, { maxLength: 3 })),
    IDS: cell(fc.array(fc.bigInt({ min: -(2n ** 63n) + 1n, max: 2n ** 63n - 1n }), { maxLength: 3 })),
  });

type Op = { kind: 'put' | 'insert'; row: Row } | { kind: 'delete'; id: number };
const opArb: fc.Arbitrary<Op> = fc.integer({ min: 1, max: 6 }).chain((id) =>
  fc.oneof(
    rowArb(id).map((row) => ({ kind: 'put' as const, row })),
    rowArb(id).map((row) => ({ kind: 'insert' as const, row })),
    fc.constant({ kind: 'delete' as const, id }),
  ),
);
const batchesArb = fc.array(fc.array(opArb, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4 });

/** A store whose SQL text leaves out the DELETE of the touched keys (the kill check's bug). */
class TextWithoutDelete extends BatchRowStore {
  override flushText() {
    return super.flushText()?.filter((statement) => !statement.startsWith('DELETE'));
  }
}

/** `insert` is for keys the table cannot hold yet (fresh ids); on a stored key it is a `put`. */
const applyOps = (store: BatchRowStore, ops: readonly Op[], stored: ReadonlySet<bigint>) => {
  for (const op of ops) {
    if (op.kind === 'delete') store.delete(BigInt(op.id));
    else if (op.kind === 'put' || stored.has(op.row.ID as bigint)) store.put(op.row);
    else store.insert(op.row);
  }
};

const storedIds = async (connection: DuckDBConnection, table: string) =>
  new Set(
    (await connection.runAndReadAll(`SELECT ID FROM ${table}`)).getRowObjectsJS().map((r) => r.ID as bigint),
  );

/** Every cell in a form that tells apart what equality of JS values would not (-0, µs, JSON text). */
const exactRows = async (connection: DuckDBConnection, table: string) =>
  (
    await connection.runAndReadAll(
      `SELECT ID, NAME, DOC::VARCHAR AS DOC, BIG, SMALL, CAST(REAL AS VARCHAR) AS REAL,
              (REAL IS NOT NULL AND 1 / REAL < 0) AS NEGATIVE, FLAG, epoch_us("AT") AS "AT", TAGS, IDS
       FROM ${table} ORDER BY ID`,
    )
  ).getRowObjectsJS();

/** A guard against a hang, not a speed: 150 runs took 15 s alone and over 30 s beside a busy worker. */
const TIMEOUT_MS = 180_000;

describe('the batch writer', () => {
  let connection: DuckDBConnection;
  beforeAll(async () => {
    connection = await (await DuckDBInstance.create(':memory:')).connect();
  });
  afterAll(() => connection.closeSync());

  const fresh = async (table: string) => {
    const p = columnsOf(table);
    await connection.run(`DROP TABLE IF EXISTS ${table}`);
    await connection.run(createTableSql(p));
    return p;
  };

  /**
   * Writes the batches through the appender and, with stores `viaText` makes, as SQL text (when
   * given); whether both tables hold the same cells. Counts the batches written as text in `asText`.
   */
  const sameCellsBothWays = async (
    batches: Op[][],
    viaText: (p: TableProjection) => BatchRowStore,
    asText: { batches: number },
  ) => {
    const viaAppender = await fresh('via_appender');
    const textTable = await fresh('via_text');
    for (const ops of batches) {
      const stored = await storedIds(connection, 'via_appender');
      const a = new BatchRowStore(viaAppender, connection);
      applyOps(a, ops, stored);
      await a.flush();
      const t = viaText(textTable);
      applyOps(t, ops, stored);
      const text = t.flushText();
      if (text) {
        asText.batches++;
        for (const statement of text) await connection.run(statement);
      } else await t.flush();
    }
    expect(await exactRows(connection, 'via_text')).toEqual(await exactRows(connection, 'via_appender'));
  };

  it(
    'given generated batches of row changes, when written as SQL text and through the appender, then both tables hold the same cells',
    async () => {
      const asText = { batches: 0 };
      await fc.assert(
        fc.asyncProperty(batchesArb, (batches) =>
          sameCellsBothWays(batches, (p) => new BatchRowStore(p, connection), asText),
        ),
        { seed: propertySeed(), numRuns: propertyRuns(150) },
      );
      // The property says something only if the text path was taken for most batches.
      expect(asText.batches).toBeGreaterThan(150);
    },
    TIMEOUT_MS,
  );

  it(
    'kill check: SQL text without the DELETE of the touched keys is caught',
    async () => {
      await expectCaught(
        fc.asyncProperty(batchesArb, (batches) =>
          sameCellsBothWays(batches, (p) => new TextWithoutDelete(p, connection), { batches: 0 }),
        ),
        { seed: propertySeed(), numRuns: propertyRuns(150) },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'given generated rows of a keyless table (its JSON objects kept as the text they are written as), when written through the appender and as SQL text, then both hold the cells a keyed table holds',
    async () => {
      // Objects that write themselves with toJSON (a Date) or hold one: the text is what JSON.stringify makes.
      const docArb = cell(
        fc.oneof(
          jsonValue,
          fc.date({ noInvalidDate: true }),
          fc.record({ at: fc.date({ noInvalidDate: true }), n: fc.double(), s: tricky }),
          fc.array(fc.oneof(fc.constant(undefined), fc.double(), tricky), { maxLength: 3 }),
        ),
      );
      const rowsArb = fc.array(fc.tuple(rowArb(0), docArb), { minLength: 1, maxLength: 8 });
      await fc.assert(
        fc.asyncProperty(rowsArb, async (generated) => {
          const rows = generated.map(([row, doc], i) => ({ ...row, ID: BigInt(i + 1), DOC: doc }));
          const keyed = await fresh('keyed');
          const written = new BatchRowStore(keyed, connection);
          for (const row of rows) written.put(row);
          await written.flush();
          for (const [table, asText] of [
            ['keyless_appender', false],
            ['keyless_text', true],
          ] as const) {
            const keyless = { ...(await fresh(table)), key: null };
            const store = new BatchRowStore(keyless, connection);
            for (const row of rows) store.put(row);
            const text = asText ? store.flushText() : undefined;
            if (text) for (const statement of text) await connection.run(statement);
            else await store.flush();
            expect(await exactRows(connection, table)).toEqual(await exactRows(connection, 'keyed'));
          }
        }),
        { seed: propertySeed(), numRuns: propertyRuns(150) },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'given generated batches committed one after another, when a row is read back, then the remembered row equals the row read from the table',
    async () => {
      await fc.assert(
        fc.asyncProperty(batchesArb, async (batches) => {
          const p = await fresh('remembered');
          const committed = new CommittedRows(3);
          for (const ops of batches) {
            // Reads inside the batch, as projections do: from the batch, the memory, or the table.
            const store = new BatchRowStore(p, connection, committed);
            for (const op of ops) if (op.kind !== 'delete') await store.get(op.row.ID as bigint);
            applyOps(store, ops, await storedIds(connection, 'remembered'));
            await store.flush();
            store.rememberCommitted();
            for (let id = 1; id <= 6; id++) {
              const fromMemory = await new BatchRowStore(p, connection, committed).get(BigInt(id));
              const fromTable = await new BatchRowStore(p, connection).get(BigInt(id));
              expect(fromMemory).toEqual(fromTable);
            }
          }
        }),
        { seed: propertySeed(), numRuns: propertyRuns(150) },
      );
    },
    TIMEOUT_MS,
  );

  it('when a remembered row read by a projection is changed in place, then what is remembered does not change', async () => {
    const p = await fresh('copied');
    const committed = new CommittedRows();
    const store = new BatchRowStore(p, connection, committed);
    store.insert({ ID: 1n, NAME: 'kept', TAGS: ['a'], AT: new Date('2026-01-01T00:00:00.123Z') });
    await store.flush();
    store.rememberCommitted();
    const read = (await new BatchRowStore(p, connection, committed).get(1n))!;
    (read.TAGS as string[]).push('b');
    (read.AT as Date).setTime(0);
    read.NAME = 'changed';
    expect(await new BatchRowStore(p, connection, committed).get(1n)).toEqual(
      await new BatchRowStore(p, connection).get(1n),
    );
  });
});
