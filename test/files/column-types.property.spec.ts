/**
 * A large CSV's column types are read from a sample first (src/files/columnTypes.ts): the sample
 * only rules types out that cannot fit the whole file, so the promise is that the answer equals the
 * one-pass answer (every candidate checked on every cell) for any file. Property over generated
 * files whose columns are mostly one kind with a few stray cells (where the 2 % tolerance decides),
 * sampled at generated shares; beside it, a kill check: a sample that rules a type out at its first
 * failing cell is caught at the count `npm test` runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { inferColumnTypes, stillPossible, type Sampling } from '../../src/files/columnTypes';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(60);

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
const world = fc.record({
  rows: fc.integer({ min: 1, max: 400 }),
  columns: fc.array(column, { minLength: 1, maxLength: 3 }),
  seedCells: fc.array(fc.nat(), { minLength: 400, maxLength: 400 }),
  share: fc.double({ min: 0.01, max: 0.6, noNaN: true }),
});

type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

const quoted = (cell: string) => `"${cell.replaceAll('"', '""')}"`;

/** The world's CSV: each column's kind cycled through its values, strays put at their rows. */
const csvOf = (w: World) => {
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

describe('CSV column types read from a sample first', () => {
  let dir: string;
  let db: DuckDBInstance;
  let c: DuckDBConnection;
  let n = 0;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'column-types-'));
    db = await DuckDBInstance.create(':memory:');
    c = await db.connect();
  });
  afterAll(() => {
    c.closeSync();
    db.closeSync();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Where the sampled answer differs from the one-pass answer, or null. */
  const difference = async (w: World, possible: Sampling['possible']) => {
    const file = path.join(dir, `t${n++}.csv`);
    fs.writeFileSync(file, csvOf(w));
    const from = `read_csv('${file}', all_varchar = true, delim = ',', quote = '"', escape = '"', header = true)`;
    const names = w.columns.map((_, i) => `c${i}`);
    const onePass = await inferColumnTypes(c, from, names, w.rows, { minRows: Infinity, share: 1, possible });
    const sampled = await inferColumnTypes(c, from, names, w.rows, { minRows: 1, share: w.share, possible });
    return JSON.stringify(onePass) === JSON.stringify(sampled)
      ? null
      : `one pass ${JSON.stringify(onePass)}, sampled ${JSON.stringify(sampled)}`;
  };

  it('gives the one-pass answer for any file and sample share', async () => {
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        expect(await difference(w, stillPossible)).toBeNull();
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('kill check: a sample that rules a type out at its first failing cell is caught', async () => {
    const hasty: Sampling['possible'] = (part, rows) =>
      stillPossible(part, rows).filter((t) => (part.holds.get(t) ?? 0) === part.nonEmpty);
    const found = await fc.check(
      fc.asyncProperty(world, async (w) => (await difference(w, hasty)) === null),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(found.failed).toBe(true);
  });
});
