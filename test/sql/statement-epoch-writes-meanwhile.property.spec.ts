/**
 * A SELECT's DuckDB statement (src/sql/pipeline/statementCache.ts, `readDeterministic`) meets
 * batches the projection writer commits on another connection while it runs (issue 62, goal 4:
 * under mixed load, nearly half the SELECTs ran twice when a batch was written while their rows
 * were fetched).
 *
 * The promise: a read answers the rows of the snapshot its run started with. A batch written
 * between the statement's planning and its run's start is in that snapshot, and the read answers
 * as a fresh read after it (the plan, made for other data, is not used: the query runs again, also
 * when the plan's run failed, as a GROUP BY planned as a perfect hash for fewer groups does); a
 * batch written while the rows are fetched is not in it, and the read answers as a fresh read
 * before it, without running again. Kill check: with an epoch that does not move across batches,
 * a statement planned over the empty table and run after a batch answers "no rows", and the same
 * property catches it.
 */
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection, type DuckDBResult } from '@duckdb/node-api';
import { readDeterministic } from '../../src/sql/pipeline/statementCache';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(30);

const QUERIES = [
  "SELECT count(*) AS n FROM t WHERE s LIKE 'a%'",
  'SELECT max(s) AS m, count(DISTINCT n) AS d FROM t',
  'SELECT s, count(*) AS c FROM t GROUP BY s ORDER BY s',
];

/** Where a read meets a batch: none, after its statement is planned, or while its rows are fetched. */
type Meets = 'none' | 'afterPlanning' | 'whileFetching';
type Rows = [string, number][];
type Op = { kind: 'read'; query: number; meets: Meets; rows: Rows } | { kind: 'batch'; rows: Rows };

const rows: fc.Arbitrary<Rows> = fc.array(
  fc.tuple(fc.constantFrom('a', 'abc', 'b', 'ba', 'zz'), fc.integer({ min: 0, max: 10 })),
  { minLength: 1, maxLength: 3 },
);
const ops: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('read' as const),
        query: fc.nat(QUERIES.length - 1),
        meets: fc.constantFrom<Meets>('none', 'afterPlanning', 'whileFetching'),
        rows,
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('batch' as const), rows }) },
  ),
  { maxLength: 12 },
);

/** The rows of a result as one comparable text. */
const rowsOf = async (result: DuckDBResult) => JSON.stringify(await result.getRowsJson());

let instance: DuckDBInstance;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
});
afterAll(() => instance.closeSync());

/**
 * A table of its own, a reader (with its kept statements) and a writer on it, as the projection
 * runner and a pooled reader are; a batch moves the data epoch by one before it commits and one
 * after (`epochMoves`: false for the kill check).
 */
const onFreshTable = async <T>(
  table: string,
  epochMoves: boolean,
  work: (deps: {
    reader: DuckDBConnection;
    batch: (rows: Rows) => Promise<void>;
    fresh: (sql: string) => Promise<string>;
    epoch: () => number;
  }) => Promise<T>,
): Promise<T> => {
  const reader = await instance.connect();
  const writer = await instance.connect();
  let epoch = 0;
  try {
    await writer.run(`CREATE TABLE ${table} (s VARCHAR, n INTEGER)`);
    const batch = async (batchRows: Rows) => {
      if (epochMoves) epoch++;
      try {
        await writer.run(
          `INSERT INTO ${table} VALUES ${batchRows.map(([s, n]) => `('${s}', ${n})`).join(', ')}`,
        );
      } finally {
        if (epochMoves) epoch++;
      }
    };
    const fresh = async (sql: string) => rowsOf(await writer.run(sql));
    return await work({ reader, batch, fresh, epoch: () => epoch });
  } finally {
    await writer.run(`DROP TABLE ${table}`);
    writer.closeSync();
    reader.closeSync();
  }
};

let tables = 0;

/** Whether every read answers the rows of the snapshot its run started with (see the file's head). */
const answersOfTheirSnapshot = (sequence: Op[], epochMoves: boolean) => {
  const table = `t${tables++}`;
  return onFreshTable(table, epochMoves, async ({ reader, batch, fresh, epoch }) => {
    // The batch a read meets is committed from inside it: after its statement is planned (the
    // reader's `prepare`, when it plans one: a statement kept from this epoch is not), or once its
    // run has started and before its rows are fetched. One reader for the sequence, so statements
    // are kept across its reads as on a pooled connection.
    // Only its own text's planning: the look at DuckDB's memory before a statement is kept
    // prepares a statement of its own on the connection, once the rows are read.
    let planned: { sql: string; meet: () => Promise<void> } | null = null;
    const planning = Object.create(reader) as DuckDBConnection;
    planning.prepare = async (text) => {
      const statement = await reader.prepare(text);
      const meeting = planned?.sql === text ? planned : null;
      if (meeting) planned = null;
      await meeting?.meet();
      return statement;
    };
    for (const op of sequence) {
      if (op.kind === 'batch') {
        await batch(op.rows);
        continue;
      }
      const sql = QUERIES[op.query]!.replace('FROM t', `FROM ${table}`);
      let metAfterPlanning = false;
      planned =
        op.meets === 'afterPlanning'
          ? {
              sql,
              meet: async () => {
                metAfterPlanning = true;
                await batch(op.rows);
              },
            }
          : null;
      let fetched = false;
      const fetching = async (result: DuckDBResult) => {
        if (op.meets === 'whileFetching' && !fetched) {
          fetched = true;
          await batch(op.rows);
        }
        return rowsOf(result);
      };
      const before = await fresh(sql);
      const answer = await readDeterministic(planning, sql, {}, {}, fetching, epoch);
      planned = null;
      const after = await fresh(sql);
      if (answer !== (metAfterPlanning ? after : before)) return false;
    }
    return true;
  });
};

/**
 * A GROUP BY planned over one group, a batch adding another before its run starts: the plan's
 * perfect hash aggregate fails ("statistics … corrupt"), and the query runs again.
 */
const GROUPS_PLANNED_BEFORE_A_BATCH: Op[] = [
  { kind: 'batch', rows: [['a', 0]] },
  { kind: 'read', query: 2, meets: 'afterPlanning', rows: [['abc', 0]] },
];

/** A LIKE planned over the empty table, a batch committed before its run starts. */
const PLANNED_BEFORE_A_BATCH: Op[] = [{ kind: 'read', query: 0, meets: 'afterPlanning', rows: [['abc', 1]] }];

describe('a SELECT meeting batches written meanwhile (issue 62, goal 4)', () => {
  it('answers the rows of the snapshot its run started with, run again only when planned before a batch', async () => {
    await fc.assert(
      fc.asyncProperty(ops, (sequence) => answersOfTheirSnapshot(sequence, true)),
      { seed: SEED, numRuns: RUNS, examples: [[PLANNED_BEFORE_A_BATCH], [GROUPS_PLANNED_BEFORE_A_BATCH]] },
    );
  });

  it('reads the rows of its run without running again when a batch commits while they are fetched', async () => {
    await onFreshTable('t_fetching', true, async ({ reader, batch, epoch }) => {
      await batch([['abc', 1]]);
      const prepare = jest.spyOn(reader, 'prepare');
      const answer = await readDeterministic(
        reader,
        "SELECT count(*) AS n FROM t_fetching WHERE s LIKE 'a%'",
        {},
        {},
        async (result) => {
          await batch([['abc', 2]]);
          return rowsOf(result);
        },
        epoch,
      );
      expect(answer).toBe('[["1"]]');
      expect(prepare).toHaveBeenCalledTimes(1);
    });
  });

  it('kill check: an epoch that does not move across batches is caught by the same property', async () => {
    const found = await fc.check(
      fc.asyncProperty(ops, (sequence) => answersOfTheirSnapshot(sequence, false)),
      { seed: SEED, numRuns: RUNS, examples: [[PLANNED_BEFORE_A_BATCH]] },
    );
    expect(found.failed).toBe(true);
    // Caught by a read that met a batch after its planning.
    const sequence = found.counterexample?.[0] ?? [];
    expect(sequence.some((op) => op.kind === 'read' && op.meets === 'afterPlanning')).toBe(true);
  });
});
