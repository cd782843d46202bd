/**
 * Plain columns read straight from DuckDB's vector memory (src/sql/plainColumns.ts) give the cells
 * DuckDB's own reading gives through the column's rule (`cellOfColumn(getItem)`), and what DuckDB
 * prints for the same value: generated values of every plain type, NULLs anywhere, extremes of each
 * type, over results spanning several chunks. Beside it, a kill check: unsigned columns read with
 * their signed type's rule (the type matched without its U) are caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { plainCells } from '../../src/sql/pipeline/plainColumns';
import { cellOfColumn } from '../../src/sql/pipeline/values';
import { inMemoryConnection } from '../support/memoryDuck';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();

// What DuckDB's printed text makes as a cell: a FLOAT printed with the digits that tell it from its
// float neighbours; integers as numbers when JavaScript holds them exactly, else their digits.
const finiteOrNull = (n: number) => (Number.isFinite(n) ? n : null);
const integerCell = (digits: string) => {
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : digits;
};

type Plain = { type: string; value: fc.Arbitrary<string> };

const integer = (min: bigint, max: bigint) =>
  fc
    .oneof(
      fc.bigInt({ min, max }),
      // Small magnitudes and the edges where a value stops fitting in 32 or 53 bits.
      fc.bigInt({ min: -1000n, max: 1000n }),
      fc.constantFrom(
        0n,
        -1n,
        1n,
        2n ** 53n - 1n,
        2n ** 53n,
        -(2n ** 53n) + 1n,
        -(2n ** 53n),
        2n ** 32n - 1n,
        2n ** 32n,
        -(2n ** 31n),
      ),
      fc.constantFrom(min, max),
    )
    .map((n) => String(n < min ? min : n > max ? max : n));

// As text DuckDB casts: any double, its non-finite values by name.
const real = fc.oneof(
  fc.double().map((n) => (Number.isNaN(n) ? 'nan' : String(n).replace('Infinity', 'inf'))),
  fc.constantFrom('nan', 'inf', '-inf', '0.1', '-0.0', '1e308', '5e-324'),
);

const PLAIN: Plain[] = [
  { type: 'TINYINT', value: integer(-128n, 127n) },
  { type: 'UTINYINT', value: integer(0n, 255n) },
  { type: 'SMALLINT', value: integer(-32768n, 32767n) },
  { type: 'USMALLINT', value: integer(0n, 65535n) },
  { type: 'INTEGER', value: integer(-(2n ** 31n), 2n ** 31n - 1n) },
  { type: 'UINTEGER', value: integer(0n, 2n ** 32n - 1n) },
  { type: 'BIGINT', value: integer(-(2n ** 63n), 2n ** 63n - 1n) },
  { type: 'UBIGINT', value: integer(0n, 2n ** 64n - 1n) },
  { type: 'DOUBLE', value: real },
  {
    type: 'FLOAT',
    value: fc.oneof(
      fc.float().map((n) => (Number.isNaN(n) ? 'nan' : String(n).replace('Infinity', 'inf'))),
      real,
    ),
  },
  { type: 'BOOLEAN', value: fc.boolean().map(String) },
];

/** A generated table: per row, one value as text (or NULL) per plain type. */
const table = fc.array(fc.tuple(...PLAIN.map((p) => fc.option(p.value, { nil: null, freq: 5 }))), {
  minLength: 1,
  maxLength: 40,
});

const connection = inMemoryConnection();

type Cells = typeof plainCells;

/** Unsigned columns read as their signed type: `UBIGINT` as `BIGINT`, … (the kill check's bug). */
const unsignedAsSigned: Cells = (chunk, column, type) => plainCells(chunk, column, type.replace(/^U/, ''));

/** The cells `cells` reads equal DuckDB's reading and its printed text, for the rows drawn. */
const readAsDuckDb = async (rows: (string | null)[][], repeat: number, cells: Cells) => {
  const columns = PLAIN.map((p, i) => `c${i} ${p.type}`).join(', ');
  await connection().run(`CREATE OR REPLACE TABLE plain (${columns})`);
  const values = rows
    .map((row) => `(${row.map((v, i) => (v === null ? 'NULL' : `'${v}'::${PLAIN[i]!.type}`)).join(', ')})`)
    .join(', ');
  await connection().run(`INSERT INTO plain VALUES ${values}`);
  // Repeated in a fixed order up to ~5,000 rows: chunks of 2,048 and a short last one.
  const texts = PLAIN.map((_p, i) => `CAST(c${i} AS VARCHAR) AS t${i}`).join(', ');
  const result = await connection().stream(
    `SELECT plain.*, ${texts} FROM plain, range(${repeat}) ORDER BY range, plain.rowid`,
  );
  let seen = 0;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    PLAIN.forEach((p, i) => {
      const fast = cells(chunk, i, p.type);
      expect(fast).toBeDefined();
      const vector = chunk.getColumnVector(i);
      const text = chunk.getColumnVector(PLAIN.length + i);
      const rule = cellOfColumn(p.type);
      // Compared without expect per cell (thousands per run), the first difference reported.
      for (let r = 0; r < chunk.rowCount; r++) {
        const cell = fast!(r);
        const read = rule(vector.getItem(r), vector.type);
        const printed = text.getItem(r) as string | null;
        const fromText =
          printed === null
            ? null
            : p.type === 'BOOLEAN'
              ? printed === 'true'
              : p.type === 'DOUBLE' || p.type === 'FLOAT'
                ? finiteOrNull(p.type === 'FLOAT' ? Math.fround(Number(printed)) : Number(printed))
                : integerCell(printed);
        if (!Object.is(cell, read) || !Object.is(cell, fromText))
          expect({ type: p.type, row: r, cell }).toEqual({
            type: p.type,
            row: r,
            cell: read,
            fromText,
          });
      }
    });
    seen += chunk.rowCount;
  }
  expect(seen).toBe(rows.length * repeat);
};

describe('plain columns read from vector memory', () => {
  it('equal DuckDB’s own reading and its printed text, over several chunks', async () => {
    await fc.assert(
      fc.asyncProperty(table, fc.integer({ min: 1, max: 130 }), (rows, repeat) =>
        readAsDuckDb(rows, repeat, plainCells),
      ),
      { seed: SEED, numRuns: propertyRuns(60) },
    );
  });

  it('kill check: unsigned columns read with their signed type’s rule are caught', async () => {
    await expectCaught(
      fc.asyncProperty(table, fc.integer({ min: 1, max: 130 }), (rows, repeat) =>
        readAsDuckDb(rows, repeat, unsignedAsSigned),
      ),
      { seed: SEED, numRuns: propertyRuns(60) },
    );
  });

  it('reads constant and computed columns (flat by the time a chunk is fetched) row by row', async () => {
    const result = await connection().stream(
      `SELECT 42::BIGINT AS c, NULL::BIGINT AS n, range % 3 = 0 AS b, CASE WHEN range % 2 = 0 THEN range END AS d FROM range(5000)`,
    );
    let row = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const [constant, nulls, flags, evens] = (['BIGINT', 'BIGINT', 'BOOLEAN', 'BIGINT'] as const).map(
        (type, i) => plainCells(chunk, i, type)!,
      );
      const read = Array.from({ length: chunk.rowCount }, (_, r) => [
        constant!(r),
        nulls!(r),
        flags!(r),
        evens!(r),
      ]);
      const expected = read.map((_, r) => {
        const n = row + r;
        return [42, null, n % 3 === 0, n % 2 === 0 ? n : null];
      });
      expect(read).toEqual(expected);
      row += chunk.rowCount;
    }
    expect(row).toBe(5000);
  });

  it('leaves every other type to DuckDB’s own reading', async () => {
    const result = await connection().stream(
      `SELECT 'x' AS s, 1::HUGEINT AS h, DATE '2026-01-01' AS d, 1.5::DECIMAL(4,1) AS m`,
    );
    const chunk = (await result.fetchChunk())!;
    expect(['VARCHAR', 'HUGEINT', 'DATE', 'DECIMAL(4,1)'].map((t, i) => plainCells(chunk, i, t))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
