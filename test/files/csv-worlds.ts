/**
 * Generated CSV files whose columns are mostly one kind with a few stray cells (where the 2 %
 * tolerance decides a column's type), for the column-type properties.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

/** Cells of each kind, and strays: what a column is mostly made of, and what spoils it. */
const KINDS = {
  boolean: ['true', 'false', 'T', 'f', '1', '0'],
  integer: ['0', '1', '42', '-7', '  12 ', '900719925474'],
  decimal: ['1.5', '4123.8', '-0.25', '1e3', '3.0'],
  date: ['2024-01-02', '1999-12-31', '2026-11-28'],
  timestamp: ['2024-01-02 03:04:05', '2026-11-28 12:00:00', '1999-12-31 23:59:59'],
  text: ['cat', 'label 7', 'x'],
} as const;
const STRAYS = ['', '   ', '640,56', 'n/a', 'inf', 'nan', '2024-13-45', 'TRUE', '7', '2.5'];

const column = fc.record({
  kind: fc.constantFrom(...(Object.keys(KINDS) as (keyof typeof KINDS)[])),
  strays: fc.array(fc.record({ at: fc.nat(), cell: fc.constantFrom(...STRAYS) }), { maxLength: 12 }),
});

export const csvWorld = fc.record({
  rows: fc.integer({ min: 1, max: 400 }),
  columns: fc.array(column, { minLength: 1, maxLength: 3 }),
  seedCells: fc.array(fc.nat(), { minLength: 400, maxLength: 400 }),
  share: fc.double({ min: 0.01, max: 0.6, noNaN: true }),
});

export type CsvWorld = typeof csvWorld extends fc.Arbitrary<infer W> ? W : never;

const quoted = (cell: string) => `"${cell.replaceAll('"', '""')}"`;

/** The world's CSV: each column's kind cycled through its values, strays put at their rows. */
export const csvOf = (w: CsvWorld) => {
  const cells = w.columns.map((col) => {
    const values: readonly string[] = KINDS[col.kind];
    const out = Array.from({ length: w.rows }, (_, r) => values[w.seedCells[r]! % values.length]!);
    for (const s of col.strays) out[s.at % w.rows] = s.cell;
    return out;
  });
  const header = w.columns.map((_, i) => `c${i}`).join(',');
  const lines = Array.from({ length: w.rows }, (_, r) => cells.map((c) => quoted(c[r]!)).join(','));
  return [header, ...lines].join('\n');
};

/**
 * A DuckDB connection and a scratch folder for the spec's `describe`, opened before its tests and
 * closed after them; `write(w)` puts the world's CSV in a file and answers the `read_csv` source
 * every column-type check reads it through (all text, as an upload's analysis reads it).
 */
export const csvScratch = (prefix: string) => {
  let dir = '';
  let db: DuckDBInstance | undefined;
  let connection: DuckDBConnection | undefined;
  let n = 0;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    db = await DuckDBInstance.create(':memory:');
    connection = await db.connect();
  });
  afterAll(() => {
    connection?.closeSync();
    db?.closeSync();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    connection: () => connection!,
    write: (w: CsvWorld) => {
      const file = path.join(dir, `t${n++}.csv`);
      fs.writeFileSync(file, csvOf(w));
      return `read_csv('${file}', all_varchar = true, delim = ',', quote = '"', escape = '"', header = true)`;
    },
  };
};
