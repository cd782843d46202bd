/**
 * The column-type checks convert a cell to TIMESTAMP only where it converts to a DATE
 * (`timestampOf`, src/files/columnTypes.ts): a failing TIMESTAMP conversion is the dearest check.
 * The promise is that this is TRY_CAST's answer, cell for cell: every text DuckDB reads as a
 * TIMESTAMP it reads as a DATE too. Property over texts made from dates and timestamps in DuckDB's
 * spellings (separators, offsets, zones, BC, infinity, epoch, fractions) with characters inserted,
 * removed or replaced, and arbitrary texts; beside it, a kill check: a guard that skips texts with
 * a letter (a 'T', a zone, 'infinity') is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection, type DuckDBInstance as Instance } from '@duckdb/node-api';
import { timestampOf } from '../../src/files/columnTypes';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(40);

const TEMPLATES = [
  '2020-01-01',
  '2020-01-01 10:00',
  '2020-01-01T10:00:00Z',
  '2020-01-01 10:00:00+02',
  '2020-01-01 10:00:00.123456789',
  '2020-01-01 10:00:00 UTC',
  '2020-01-01 10:00:00-0700',
  '2020-01-01 (BC)',
  '-2020-01-01',
  '294247-01-10 04:00:54',
  '5000000-01-01',
  '2020/1/1',
  '2020-01-01 24:00:00',
  'infinity',
  '-infinity',
  'epoch',
  '1.25',
  '42',
];
const CHARS = '0123456789-:/. TZ+()BCUTinfyepoch\t';

const mutation = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('insert', 'remove', 'replace'),
  char: fc.constantFrom(...CHARS.split('')),
});

const mutated = fc
  .tuple(fc.constantFrom(...TEMPLATES), fc.array(mutation, { maxLength: 3 }))
  .map(([template, changes]) => {
    const chars = template.split('');
    for (const { at, op, char } of changes) {
      const i = at % (chars.length + 1);
      if (op === 'insert') chars.splice(i, 0, char);
      else if (op === 'remove') chars.splice(i, 1);
      else chars[i] = char;
    }
    return chars.join('');
  });

const texts = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: mutated },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...CHARS.split('')), maxLength: 30 }) },
  ),
  { minLength: 1, maxLength: 200 },
);

describe('a cell converted to TIMESTAMP only where it converts to a DATE', () => {
  let duck: Instance;
  let c: DuckDBConnection;
  beforeAll(async () => {
    duck = await DuckDBInstance.create(':memory:');
    c = await duck.connect();
    await c.run('CREATE TABLE cells (v VARCHAR)');
  });
  afterAll(() => {
    c.closeSync();
    duck.closeSync();
  });

  /** The texts whose guarded conversion differs from TRY_CAST's. */
  const differing = async (cells: readonly string[], guarded: (v: string) => string) => {
    await c.run('DELETE FROM cells');
    const appender = await c.createAppender('cells');
    for (const cell of cells) {
      appender.appendVarchar(cell);
      appender.endRow();
    }
    appender.closeSync();
    return (
      await c.runAndReadAll(
        `SELECT DISTINCT v FROM cells WHERE TRY_CAST(v AS TIMESTAMP) IS DISTINCT FROM ${guarded('v')}`,
      )
    ).getRowsJS();
  };

  it("answers TRY_CAST's TIMESTAMP for every text", async () => {
    await fc.assert(
      fc.asyncProperty(texts, async (cells) => {
        expect(await differing(cells, timestampOf)).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('kill check: a guard that skips texts holding a letter is caught', async () => {
    const lettersSkipped = (v: string) =>
      `CASE WHEN NOT regexp_matches(${v}, '[A-Za-z]') THEN TRY_CAST(${v} AS TIMESTAMP) END`;
    await expectCaught(
      fc.asyncProperty(texts, async (cells) => (await differing(cells, lettersSkipped)).length === 0),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
