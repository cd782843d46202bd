/**
 * Whatever a PostgreSQL string literal holds, the engine reads the same characters: the door's
 * translation (quotes doubled as PostgreSQL writes them, backslashes doubled for the engine's
 * MySQL-flavoured reader) checked against the real engine, not against itself.
 * Beside it, a kill check: a door that passes the literal on with its backslashes not doubled is
 * caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import type pg from 'pg';
import { startPgFront, type PgFront } from './support';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

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

/**
 * The engine given the door's text with its backslashes not doubled: PostgreSQL's literal as written,
 * read by the engine's MySQL-flavoured reader (the kill check's bug). Undone by `mockRestore`.
 */
const backslashesNotDoubled = (engine: PgFront['app']['running']['sql']) => {
  const { execute, stream } = engine;
  const asWritten = (query: string) => query.split('\\\\').join('\\');
  return [
    jest.spyOn(engine, 'execute').mockImplementation((query, ...rest) => execute(asWritten(query), ...rest)),
    jest.spyOn(engine, 'stream').mockImplementation((query, ...rest) => stream(asWritten(query), ...rest)),
  ];
};

describe('string literals through the PostgreSQL door (pg driver, real engine)', () => {
  let front: PgFront;
  let client: pg.Client;

  beforeAll(async () => {
    front = await startPgFront();
    client = await front.connect();
  });
  afterAll(() => front.dispose());

  /** The simple query's answer holds exactly the characters written in the literal. */
  const answeredAsWritten = async (s: string) => {
    const { rows } = await client.query<{ v: string; n: number }>(`SELECT ${literal(s)} AS v, 1 AS n`);
    expect(rows).toEqual([{ v: s, n: 1 }]);
  };

  it('answers SELECT <literal> with exactly the characters written in it (simple query)', async () => {
    await fc.assert(fc.asyncProperty(content, answeredAsWritten), { seed: SEED, numRuns: propertyRuns(150) });
  });

  it('kill check: a literal passed on with its backslashes not doubled is caught', async () => {
    const spies = backslashesNotDoubled(front.app.running.sql);
    try {
      await expectCaught(fc.asyncProperty(content, answeredAsWritten), {
        seed: SEED,
        numRuns: propertyRuns(150),
      });
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
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
