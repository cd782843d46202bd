/**
 * A SELECT's DuckDB statement (src/sql/pipeline/statementCache.ts, `readDeterministic`) is kept from
 * the second run of its text on a connection, and reused only in the data epoch it was planned in
 * (issue 62: a text met once, as an analyst's queries each with their own literals are, spares the
 * look at DuckDB's memory that keeping its statement costs after the run).
 *
 * The promise: whatever runs and writes come in whatever order, a read through the kept statements
 * answers what a fresh read of the same text answers then. Kill check: the same property with an
 * epoch that does not move across writes (a statement reused after a write) is caught: DuckDB plans
 * a LIKE over an empty table as "no rows", and the statement kept from then answers 0 ever after.
 */
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection, type DuckDBResult } from '@duckdb/node-api';
import { readDeterministic } from '../../src/sql/pipeline/statementCache';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(40);

const QUERIES = [
  "SELECT count(*) AS n FROM t WHERE s LIKE 'a%'",
  'SELECT max(s) AS m, count(DISTINCT n) AS d FROM t',
  'SELECT s, count(*) AS c FROM t GROUP BY s ORDER BY s',
  'SELECT s, n FROM t WHERE n > 5 ORDER BY s, n',
];

type Op = { kind: 'run'; query: number } | { kind: 'write'; rows: [string, number][] };

const run = (query: number): Op => ({ kind: 'run', query });
const write = (rows: [string, number][]): Op => ({ kind: 'write', rows });

const ops: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.nat(QUERIES.length - 1).map(run) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.tuple(fc.constantFrom('a', 'abc', 'b', 'ba', 'zz'), fc.integer({ min: 0, max: 10 })), {
          minLength: 1,
          maxLength: 3,
        })
        .map(write),
    },
  ),
  { maxLength: 16 },
);

/** The rows of a result as one comparable text. */
const rowsOf = async (result: DuckDBResult) => JSON.stringify(await result.getRowsJson());

let instance: DuckDBInstance;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
});
afterAll(() => instance.closeSync());

/** On a connection of its own (its kept statements with it), a table `t` and `work` on it. */
const onFreshTable = async <T>(work: (c: DuckDBConnection) => Promise<T>): Promise<T> => {
  const c = await instance.connect();
  try {
    await c.run('CREATE TEMP TABLE t (s VARCHAR, n INTEGER)');
    return await work(c);
  } finally {
    c.closeSync();
  }
};

/**
 * Whether every run through `readDeterministic` answers what a fresh read answers, the data epoch
 * after `writes` writes being `epochOf(writes)` (the projection runner's moves by two per batch).
 */
const answersAgree = (sequence: Op[], epochOf: (writes: number) => number) =>
  onFreshTable(async (c) => {
    let writes = 0;
    for (const op of sequence) {
      if (op.kind === 'write') {
        await c.run(`INSERT INTO t VALUES ${op.rows.map(([s, n]) => `('${s}', ${n})`).join(', ')}`);
        writes++;
        continue;
      }
      const sql = QUERIES[op.query]!;
      const read = await readDeterministic(c, sql, {}, {}, rowsOf, () => epochOf(writes));
      if (read !== (await rowsOf(await c.run(sql)))) return false;
    }
    return true;
  });

/** A LIKE planned over the empty table, kept (its second run), then the table written. */
const STALE_AFTER_WRITE: Op[] = [run(0), run(0), write([['abc', 1]]), run(0)];

describe('statements kept for a SELECT text (endpoint overhead, issue 62)', () => {
  it('keeps a text’s statement from its second run on a connection, and reuses it from the third', async () => {
    // The clock held: every run takes no time, so whether a statement is kept depends on its text
    // alone (a run of 50 ms or more is never kept, and on a busy machine these may take that long).
    const clock = jest.spyOn(Date, 'now').mockReturnValue(0);
    await onFreshTable(async (c) => {
      const prepare = jest.spyOn(c, 'prepare');
      const readAt = (sql: string, epoch: number) => readDeterministic(c, sql, {}, {}, rowsOf, () => epoch);
      for (let i = 0; i < 3; i++) await readAt(QUERIES[1]!, 0);
      // Met once, prepared and dropped; met again, prepared and kept; then reused.
      expect(prepare).toHaveBeenCalledTimes(2);
      await readAt(QUERIES[2]!, 0);
      expect(prepare).toHaveBeenCalledTimes(3);
      // A write moved the epoch: the kept statement is planned again (and kept, its text met before).
      await c.run("INSERT INTO t VALUES ('b', 2)");
      expect(await readAt(QUERIES[1]!, 2)).toBe(await rowsOf(await c.run(QUERIES[1]!)));
      expect(await readAt(QUERIES[1]!, 2)).toBe('[["b","1"]]');
      expect(prepare).toHaveBeenCalledTimes(4);
    }).finally(() => clock.mockRestore());
  });

  it('answers what a fresh read answers, whatever runs and writes come in whatever order', async () => {
    await fc.assert(
      fc.asyncProperty(ops, (sequence) => answersAgree(sequence, (writes) => 2 * writes)),
      { seed: SEED, numRuns: RUNS, examples: [[STALE_AFTER_WRITE]] },
    );
  });

  it('kill check: statements reused across writes (an epoch that does not move) are caught by the same property', async () => {
    const found = await fc.check(
      fc.asyncProperty(ops, (sequence) => answersAgree(sequence, () => 0)),
      { seed: SEED, numRuns: RUNS, examples: [[STALE_AFTER_WRITE]] },
    );
    expect(found.failed).toBe(true);
    // Caught by a stale answer, not an error: a read after a write.
    const sequence = found.counterexample?.[0] ?? [];
    expect(sequence.some((op) => op.kind === 'write')).toBe(true);
  });
});
