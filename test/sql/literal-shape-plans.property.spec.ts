/**
 * A SELECT the service has not seen, differing from one it planned in whole numbers only
 * (`HAVING count(*) > 5` and `… > 6`, `LIMIT 3` and `LIMIT 7`), is planned from that plan
 * without DuckDB's parse or the name resolution (src/sql/pipeline/literalShape.ts): the tables
 * renamed in its own text, which DuckDB prepares literals and all (issue 62, the SQL endpoint's
 * overhead over DuckDB in process).
 *
 * The promise: such a text answers as itself. For a generated SELECT q over uploaded files
 * (filters, joins, GROUP BY with HAVING, window functions, ORDER BY every column with LIMIT), q is
 * read, then q' (q with its whole numbers outside strings and ordinals drawn anew); q' answers the
 * same columns (names and types) and rows, or the same error, as q' read afresh (wrapped in a
 * subquery with an alias of its own, a text no cache has met). Rows are compared as multisets. The
 * event store is not on this path: SQLite's only. Examples: an ordinal and a literal's type are
 * still DuckDB's to read. Kill check: the kept plan run as it was (its own text's literals) is
 * caught.
 */
import fc from 'fast-check';
import { querySql, startTestApp, type SqlAnswer, type TestApp } from '../support/app';
import { selectOverTwoTables, uploadedSelect } from '../support/generatedSql';
import { methodReplaced } from '../support/killChecks';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';
import { sameShape } from '../../src/sql/pipeline/statementCache';

const SEED = propertySeed();
const RUNS = propertyRuns(25);

/** A whole number outside strings: not part of a name, a decimal or a `$1`. */
const WHOLE_NUMBER = /(?<![\w.$])\d+(?![\w.])/g;

/**
 * `sql` with its whole numbers (outside strings) replaced in turn by `numbers`, the ordinals of a
 * closing ORDER BY kept (its LIMIT's changed): ordinals of every column keep the rows a LIMIT
 * takes the same whichever way they are read.
 */
const renumbered = (sql: string, numbers: number[]) => {
  let next = 0;
  const order = sql.lastIndexOf(' ORDER BY ');
  const limit = sql.lastIndexOf(' LIMIT ');
  const change = (part: string) =>
    part
      .split(/('(?:[^']|'')*')/)
      .map((piece, i) =>
        i % 2 === 1 ? piece : piece.replace(WHOLE_NUMBER, () => String(numbers[next++ % numbers.length])),
      )
      .join('');
  if (order === -1) return change(sql);
  return change(sql.slice(0, order)) + sql.slice(order, limit) + change(sql.slice(limit));
};

/** An answer as compared: columns and rows (a multiset), or its error's code. */
const compared = (a: SqlAnswer) =>
  a.type === 'table'
    ? {
        column_names: a.column_names,
        column_types: a.column_types,
        rows: a.data!.map((r) => JSON.stringify(r)).sort(),
      }
    : { error: a.error_code };

const drawn = selectOverTwoTables(fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 4 }));

type Drawn = typeof drawn extends fc.Arbitrary<infer T> ? T : never;

describe('a text differing from a planned one in whole numbers answers as itself', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(() => t?.dispose());

  let fresh = 0;
  const answersAsItself = async (d: Drawn) => {
    const q = await uploadedSelect(t, d);
    const again = renumbered(q, d.extra);
    await querySql(t, q);
    const answer = await querySql(t, again);
    const afresh = await querySql(t, `SELECT * FROM (${again}) AS fresh_${++fresh}`);
    expect({ again, answer: compared(answer) }).toEqual({ again, answer: compared(afresh) });
  };

  it('answers as the same text read afresh', async () => {
    await fc.assert(fc.asyncProperty(drawn, answersAsItself), { seed: SEED, numRuns: RUNS });
  }, 600_000);

  it('reads an ordinal as its own text writes it', async () => {
    const values = "SELECT * FROM (VALUES (1, 'z'), (2, 'y')) AS v(a, b)";
    expect((await querySql(t, `${values} ORDER BY 1`)).data).toEqual([
      [1, 'z'],
      [2, 'y'],
    ]);
    expect((await querySql(t, `${values} ORDER BY 2`)).data).toEqual([
      [2, 'y'],
      [1, 'z'],
    ]);
  });

  it('types a literal as its own text writes it', async () => {
    const small = await querySql(
      t,
      'SELECT 7 AS x, count(*) AS n FROM information_schema.events WHERE 1 = 1',
    );
    const large = await querySql(
      t,
      'SELECT 7000000000 AS x, count(*) AS n FROM information_schema.events WHERE 1 = 1',
    );
    expect([small.column_types?.[0], small.data?.[0]?.[0]]).toEqual(['INTEGER', 7]);
    expect([large.column_types?.[0], large.data?.[0]?.[0]]).toEqual(['BIGINT', 7000000000]);
  });

  it('kill check: the kept plan run as it was (its own literals) is caught', async () => {
    const undo = methodReplaced(sameShape, 'planFor', () => (kept) => kept);
    try {
      await expectCaught(fc.asyncProperty(drawn, answersAsItself), { seed: SEED, numRuns: RUNS });
    } finally {
      undo();
    }
  }, 600_000);
});
