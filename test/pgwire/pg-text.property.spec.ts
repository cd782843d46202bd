/**
 * Whatever a PostgreSQL string literal holds, the engine reads the same characters: the door's
 * translation (quotes doubled as PostgreSQL writes them, backslashes doubled for the engine's
 * MySQL-flavoured reader) checked against the real engine, not against itself.
 */
import fc from 'fast-check';
import type pg from 'pg';
import { startPgFront, type PgFront } from './support';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();

/** Pieces that mean something to one of the readers on the way: quotes, escapes, separators, parameters, comments. */
const tricky = fc.constantFrom(
  "'",
  "''",
  '\\',
  '\\\\',
  "\\'",
  '"',
  '`',
  ';',
  '$1',
  '$$',
  ':__pg_param_1',
  ':x',
  '?',
  '%',
  '_',
  '--',
  '/*',
  '*/',
  '#',
  '{',
  '}',
  '@@version',
  '\n',
  '\r\n',
  '\t',
  ' ',
  'é',
  '✓',
  '😀',
  'version()',
  'current_user',
);
const content = fc
  .array(fc.oneof(tricky, fc.string({ unit: 'grapheme', maxLength: 4 })), { maxLength: 12 })
  .map((pieces) => pieces.join(''))
  // A query is a C string: PostgreSQL itself refuses a NUL in it.
  .filter((s) => !s.includes('\u0000'));

/** `s` as a PostgreSQL standard string literal: quotes doubled, nothing else escaped. */
const literal = (s: string) => `'${s.split("'").join("''")}'`;

describe('string literals through the PostgreSQL door (pg driver, real engine)', () => {
  let front: PgFront;
  let client: pg.Client;

  beforeAll(async () => {
    front = await startPgFront();
    client = await front.connect();
  });
  afterAll(() => front.dispose());

  it('answers SELECT <literal> with exactly the characters written in it (simple query)', async () => {
    await fc.assert(
      fc.asyncProperty(content, async (s) => {
        const { rows } = await client.query<{ v: string; n: number }>(`SELECT ${literal(s)} AS v, 1 AS n`);
        expect(rows).toEqual([{ v: s, n: 1 }]);
      }),
      { seed: SEED, numRuns: propertyRuns(150) },
    );
  });

  it('answers the same literal beside a parameter carrying the same characters (extended protocol)', async () => {
    await fc.assert(
      fc.asyncProperty(content, async (s) => {
        const { rows } = await client.query<{ v: string; p: string }>(
          `SELECT ${literal(s)} AS v, $1::VARCHAR AS p`,
          [s],
        );
        expect(rows).toEqual([{ v: s, p: s }]);
      }),
      { seed: SEED, numRuns: propertyRuns(75) },
    );
  });
});
