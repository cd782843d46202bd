/**
 * Column labels are kept by statement text and answer columns (src/shared/sqlLabels.ts): a
 * repeated SELECT is labelled from the memo. The memo answers what reading the text again
 * answers, whatever was asked in between, and a caller changing its copy changes nothing kept.
 * Beside it, a kill check: a memo that hands the caller its kept array (no copy) is caught at the
 * count `npm test` runs.
 */
import fc from 'fast-check';
import { writtenLabels } from '../../src/shared/sqlLabels';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const NUM_RUNS = Number(process.env.PROMISE_RUNS ?? 60);

const item = fc.oneof(
  fc.constantFrom('*', 't.*', 'a', 't.a', '1 + 2', 'count(*)', "'x'", 'upper(name)', '`odd name`'),
  fc
    .tuple(fc.constantFrom('a', 'b + 1', 'sum(c)'), fc.constantFrom('x', '`y z`', '"q"'))
    .map(([e, alias]) => `${e} AS ${alias}`),
  fc.string({ unit: 'grapheme', maxLength: 6 }).map((s) => `'${s.replace(/'/g, "''")}'`),
);
const statement = fc.record({
  items: fc.array(item, { minLength: 1, maxLength: 5 }),
  columns: fc.array(fc.string({ unit: 'binary', maxLength: 5 }), { minLength: 0, maxLength: 7 }),
  tail: fc.constantFrom('', ' FROM t', ' FROM t WHERE a = 1', ' -- note'),
});

type Labeller = (sql: string, columns: readonly string[]) => string[];

/** A memo as `writtenLabels` keeps one, but handing out the array it keeps (the kill check's bug). */
const memoWithoutCopy = (): Labeller => {
  const kept = new Map<string, string[]>();
  return (sql, columns) => {
    const key = `${sql}\u0000${columns.join('\u0000')}`;
    let labels = kept.get(key);
    if (!labels) {
      if (kept.size >= 512) kept.clear();
      kept.set(key, (labels = writtenLabels(sql, columns)));
    }
    return labels;
  };
};

const statements = fc.array(statement, { minLength: 1, maxLength: 40 });
type Drawn = typeof statements extends fc.Arbitrary<infer D> ? D : never;

/** The memo's promise for `labels`, over the drawn statements. */
const answersAsFirstReading = (drawn: Drawn, labels: Labeller) => {
  const inputs = drawn.map((d) => ({
    sql: `SELECT ${d.items.join(', ')}${d.tail}`,
    columns: d.columns,
  }));
  // The first reading of each (the memo is filled as it goes; a repeat in `inputs` is a hit).
  const first = inputs.map((i) => labels(i.sql, i.columns));
  for (const [k, i] of inputs.entries()) {
    const again = labels(i.sql, i.columns);
    expect(again).toEqual(first[k]);
    again.push('changed by the caller');
    expect(labels(i.sql, i.columns)).toEqual(first[k]);
  }
  // More distinct texts than the memo holds: it is cleared, and reads again the same.
  for (let n = 0; n < 600; n++) labels(`SELECT ${n} AS filler`, ['filler']);
  for (const [k, i] of inputs.entries()) expect(labels(i.sql, i.columns)).toEqual(first[k]);
};

describe('SELECT labels, kept by text and columns', () => {
  it('keeps apart answers whose columns would join alike ([] and [""], ["a\\0b"] and ["a", "b"])', () => {
    // Found by the property below (seed 1843180271): the memo's key joined the columns with NUL.
    const sql = 'SELECT `odd name` -- note';
    expect(writtenLabels(sql, [''])).toEqual(['odd name']);
    expect(writtenLabels(sql, [])).toEqual([]);
    const two = 'SELECT a, b';
    expect(writtenLabels(two, ['a\u0000b'])).toEqual(['a\u0000b']);
    expect(writtenLabels(two, ['a', 'b'])).toEqual(['a', 'b']);
    expect(writtenLabels(two, ['A', 'B'])).toEqual(['a', 'b']);
  });

  it('answer, from the memo, what the first reading answered, also after the memo was cleared and after a caller changed its copy', () => {
    fc.assert(
      fc.property(statements, (drawn) => answersAsFirstReading(drawn, writtenLabels)),
      { seed: SEED, numRuns: propertyRuns(NUM_RUNS) },
    );
  });

  it('kill check: a memo that hands the caller its kept array, not a copy, is caught', () => {
    expectCaught(
      fc.property(statements, (drawn) => answersAsFirstReading(drawn, memoWithoutCopy())),
      { seed: SEED, numRuns: propertyRuns(NUM_RUNS) },
    );
  });

  it('labels a text longer than the memo keeps as it labels a short one', () => {
    const padding = ' '.repeat(5000);
    expect(writtenLabels(`SELECT a + 1, b AS x${padding}`, ['c1', 'x'])).toEqual(['a + 1', 'x']);
    expect(writtenLabels('SELECT a + 1, b AS x', ['c1', 'x'])).toEqual(['a + 1', 'x']);
  });
});
