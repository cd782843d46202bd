/**
 * `Duck.query`'s read (src/duckdb/readRows.ts, `readRowObjects`) answers the rows
 * `runAndReadAll(sql, params).getRowObjectsJS()` answered, in two trips to DuckDB's threads
 * instead of five (issue 62, goal 4).
 *
 * The promise: for any table and any read of it — parameters by position, by name or none, a
 * column name met twice, a text of two statements with parameters, a result of one chunk or of
 * several — the rows, their values and their keys are those of the old path. Kill checks: the
 * shortcut reading only the first chunk of a materialized result, and naming columns as DuckDB
 * does instead of as the reader does (a name met twice overwrites the first), are each caught by
 * the same property at the same run count.
 */
import fc from 'fast-check';
import type { DuckDBValue } from '@duckdb/node-api';
import { materialized, readRowObjects } from '../../src/duckdb/readRows';
import { methodReplaced, whileBugged } from '../support/killChecks';
import { inMemoryConnection } from '../support/memoryDuck';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(25);

/** A read of table `t`: its text and its parameters (none, by position, by name). */
type Read = { sql: string; params?: DuckDBValue[] | Record<string, DuckDBValue> };

const COLUMNS = ['id', 's', 'd', 'b', 'ts', 'l', 'st', 'dec', 'h', 'id AS s', 'id', 'NULL AS n'];

const reads = (from: number): fc.Arbitrary<Read> =>
  fc
    .tuple(
      fc.subarray(COLUMNS, { minLength: 1 }),
      fc.constantFrom('positional', 'named', 'none', 'two statements', 'empty list'),
    )
    .map(([columns, how]): Read => {
      const list = columns.join(', ');
      switch (how) {
        case 'positional':
          return { sql: `SELECT ${list} FROM t WHERE id >= ? ORDER BY t.id`, params: [from] };
        case 'named':
          return { sql: `SELECT ${list} FROM t WHERE id >= $lo ORDER BY t.id`, params: { lo: from } };
        case 'none':
          return { sql: `SELECT ${list} FROM t WHERE id >= ${from} ORDER BY t.id` };
        case 'two statements':
          return { sql: `SELECT 1; SELECT ${list} FROM t WHERE id >= ? ORDER BY t.id`, params: [from] };
        case 'empty list':
          return { sql: `SELECT ${list} FROM t WHERE id >= ${from} ORDER BY t.id`, params: [] };
      }
    });

/** Rows enough for one chunk or several (DuckDB's chunks hold 2,048 rows), nulls every `nulls`th. */
const worlds = fc.record({
  rows: fc.oneof(fc.nat(6), fc.integer({ min: 2040, max: 5000 })),
  nulls: fc.integer({ min: 2, max: 9 }),
  from: fc.nat(30),
});

const connection = inMemoryConnection();

const sameRows = fc.asyncProperty(
  worlds.chain((world) =>
    fc.tuple(fc.constant(world), fc.array(reads(world.from), { minLength: 1, maxLength: 3 })),
  ),
  async ([world, sequence]) => {
    await connection().run(
      `CREATE OR REPLACE TABLE t AS SELECT range AS id,
        CASE WHEN range % ${world.nulls} = 0 THEN NULL ELSE 'v' || (range * 7) END AS s,
        range * 1.5 AS d, range % 2 = 0 AS b, TIMESTAMP '2020-01-01' + to_seconds(range) AS ts,
        [range, range + 1] AS l, {'x': range, 'y': 'w' || range} AS st,
        (range * 7)::DECIMAL(18, 3) AS dec, range::HUGEINT * 1000000000000 AS h
       FROM range(${world.rows})`,
    );
    for (const read of sequence) {
      const old = (await connection().runAndReadAll(read.sql, read.params)).getRowObjectsJS();
      expect(await readRowObjects(connection(), read.sql, read.params)).toStrictEqual(old);
    }
  },
);

describe('Duck.query read in two trips (readRowObjects)', () => {
  it('answers the rows, values and keys runAndReadAll().getRowObjectsJS() answered', async () => {
    await fc.assert(sameRows, { seed: SEED, numRuns: RUNS });
  });

  it('kill check: reading only the first chunk of a materialized result is caught', async () => {
    await whileBugged(
      () =>
        methodReplaced(
          materialized,
          'chunkCount',
          (chunkCount) => (result) => Math.min(1, chunkCount(result)),
        ),
      () => expectCaught(sameRows, { seed: SEED, numRuns: RUNS }),
    );
  });

  it("kill check: DuckDB's column names (a name met twice overwrites the first) are caught", async () => {
    await whileBugged(
      () => methodReplaced(materialized, 'names', () => (result) => result.columnNames()),
      () => expectCaught(sameRows, { seed: SEED, numRuns: RUNS }),
    );
  });
});
