/**
 * A training's rows arrive as arrays beside their column names (src/sql/service.ts `queryTable`)
 * and are turned into columns without being made objects first (`columnsFromTables`): the columns
 * must be those the same rows made objects give (`columnsFromRows`), for any names (repeated,
 * integer-like, `__proto__`), any cells, and tables read one after another (a fine-tuned version's
 * prior data, then its own, with columns of their own). Beside it, a kill check: a repeated name
 * taking its first cells (an object keeps the last) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import type { Row } from '../../src/engines/ml/dataset';
import { columnsFromRows, columnsFromTables } from '../../src/engines/ml/table';
import type { RowTable } from '../../src/shared/sqlAnswers';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';

const name = fc.constantFrom('a', 'b', 'price', '1', '0', '__proto__', 'constructor', 'b');
const cellOf = fc.oneof(
  fc.double({ noNaN: false }),
  fc.integer(),
  fc.constantFrom(null, undefined, '', 'x', true, false),
  fc.string({ maxLength: 4 }),
);
const table = fc
  .array(name, { minLength: 0, maxLength: 5 })
  .chain((names) =>
    fc
      .array(fc.array(cellOf, { minLength: names.length, maxLength: names.length }), { maxLength: 6 })
      .map((rows): RowTable => ({ names, rows })),
  );
/** Up to three tables; numeric-only ones often, so typed columns are met too. */
const tables = fc.array(
  fc.oneof(
    table,
    table.map((t) => ({ ...t, rows: t.rows.map((r) => r.map((v) => (typeof v === 'number' ? v : null))) })),
  ),
  { minLength: 0, maxLength: 3 },
);

/**
 * The rows made objects, as the service did before, but without a prototype: a later table lacking
 * a column named `constructor` read `Object` from the prototype there (now: missing, as it should).
 */
const asObjects = (ts: readonly RowTable[]): Row[] =>
  ts.flatMap((t) =>
    t.rows.map((r) =>
      Object.assign(Object.create(null) as Row, Object.fromEntries(t.names.map((n, i) => [n, r[i]]))),
    ),
  );

/** Columns compared with NaN equal to NaN, typed arrays by kind and values. */
const comparable = (d: { columns: string[]; data: ArrayLike<unknown>[] }) => ({
  columns: d.columns,
  data: d.data.map((c) => ({
    typed: ArrayBuffer.isView(c),
    values: Array.from(c, (v) => (typeof v === 'number' && Number.isNaN(v) ? 'NaN' : v)),
  })),
});

const sameAsObjects = (convert: typeof columnsFromTables) =>
  fc.asyncProperty(tables, async (ts) => {
    expect(comparable(await convert(ts))).toEqual(comparable(columnsFromRows(asObjects(ts))));
  });

describe('training rows turned into columns', () => {
  const settings = { seed: propertySeed(), numRuns: propertyRuns(200) };

  it('given tables of any names and cells, then their columns are those of the same rows made objects', async () => {
    await fc.assert(sameAsObjects(columnsFromTables), settings);
  });

  it('given a million cells, then the conversion yields to the event loop while it works', async () => {
    const rows = Array.from({ length: 300_000 }, (_, i) => [i, i % 7, `c${i % 3}`, i / 2]);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const columns = await columnsFromTables([{ names: ['a', 'b', 'c', 'd'], rows }]);
    clearInterval(ticker);
    expect(columns.columns).toEqual(['a', 'b', 'c', 'd']);
    expect(columns.data[0]).toBeInstanceOf(Float64Array);
    expect(columns.data[2]![299_999]).toBe('c2');
    expect(turns).toBeGreaterThan(0);
  });

  it('kill check: a repeated name taking its first cells (an object keeps the last) is caught', async () => {
    const firstPlace: typeof columnsFromTables = (ts) =>
      columnsFromTables(
        ts.map((t) => ({
          // Each name's later places dropped: its first cells are the ones read.
          names: t.names.map((n, i) => (t.names.indexOf(n) === i ? n : `${n} (again)`)),
          rows: t.rows,
        })),
      ).then((d) => {
        const keep = d.columns.map((c, j) => (c.endsWith(' (again)') ? -1 : j)).filter((j) => j >= 0);
        return { columns: keep.map((j) => d.columns[j]!), data: keep.map((j) => d.data[j]!) };
      });
    await expectCaught(sameAsObjects(firstPlace), settings);
  });
});
