/**
 * The tokenizer keeps the last texts it read (src/shared/sqlTokens.ts, `tokenize`): a text asked
 * again in the same dialect is handed the tokens it was handed before. Those answer what reading the
 * text afresh answers, whatever texts and dialects came in between, long texts (kept only as the
 * latest) included; they are frozen; and `significant` of them answers what filtering afresh does.
 * Beside it, a kill check: a memo keyed by the text alone, the dialect forgotten, is caught at the
 * count `npm test` runs.
 */
import fc from 'fast-check';
import {
  readTokens,
  significant,
  SqlSyntaxError,
  tokenize,
  type Dialect,
  type Token,
} from '../../src/shared/sqlTokens';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const NUM_RUNS = 60;

type Tokenizer = (sql: string, dialect: Dialect) => readonly Token[];

/** Pieces the three dialects read each its own way, unclosed quotes among them. */
const piece = fc.constantFrom(
  'SELECT',
  ' ',
  '\n',
  '\r',
  'a',
  '1.5',
  '.5',
  "'s'",
  "'it''s'",
  "'a\\'b'",
  '"q"',
  '"a""b"',
  '`b`',
  ':p',
  '@v',
  '@@x',
  '$1',
  '$n',
  '?',
  '#c\n',
  '-- c\r',
  '/* c */',
  '/* /* n */ */',
  '(',
  ')',
  ',',
  '.',
  "'",
  '"',
  'é',
  'x$y',
);
/** Short texts, and now and then one past the memo's long-text bound (8192 characters). */
const text = fc.oneof(
  { weight: 4, arbitrary: fc.array(piece, { maxLength: 12 }).map((ps) => ps.join('')) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.integer({ min: 8200, max: 20_000 }))
      .map(([ps, n]) => ps.join('').repeat(Math.ceil(n / ps.join('').length))),
  },
);
const dialect = fc.constantFrom<Dialect>('mysql', 'mysql-client', 'duckdb');
/** A few texts, asked about in some order, each in some dialect: texts and dialects repeat. */
const asked = fc.array(text, { minLength: 1, maxLength: 4 }).chain((texts) =>
  fc.array(
    fc.tuple(fc.nat({ max: texts.length - 1 }), dialect).map(([k, d]) => ({ sql: texts[k]!, dialect: d })),
    { minLength: 1, maxLength: 30 },
  ),
);

/** What a tokenizer answers: its tokens (copied), or the syntax error it throws. */
const outcome = (read: () => readonly Token[]): { tokens: Token[] } | { error: string; offset: number } => {
  try {
    return { tokens: [...read()] };
  } catch (error) {
    if (error instanceof SqlSyntaxError) return { error: error.message, offset: error.offset };
    throw error;
  }
};

/** `expect(actual).toEqual(expected)`, compared as JSON first: jest's deep equality is slow on 20,000 tokens. */
const expectSame = (actual: unknown, expected: unknown) => {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual).toEqual(expected);
};

/** The memo's promise for `tokenizer`, over the asked texts. */
const answersAsFreshReading = (questions: { sql: string; dialect: Dialect }[], tokenizer: Tokenizer) => {
  for (const { sql, dialect: d } of questions) {
    const fresh = outcome(() => readTokens(sql, d));
    expectSame(
      outcome(() => tokenizer(sql, d)),
      fresh,
    );
    if (!('tokens' in fresh)) continue;
    const handed = tokenizer(sql, d);
    expect(Object.isFrozen(handed)).toBe(true);
    expectSame(
      significant(handed),
      fresh.tokens.filter((t) => t.kind !== 'blank' && t.kind !== 'comment'),
    );
  }
};

/** A memo as `tokenize` keeps one, but keyed by the text alone (the kill check's bug). */
const memoByTextOnly = (): Tokenizer => {
  const kept = new Map<string, readonly Token[]>();
  return (sql, d) => {
    let tokens = kept.get(sql);
    if (!tokens) {
      if (kept.size >= 8) kept.clear();
      kept.set(sql, (tokens = Object.freeze(readTokens(sql, d))));
    }
    return tokens;
  };
};

describe('the tokenizer, keeping the texts it read last', () => {
  it('answers, for a text asked again, what reading it afresh answers, in every dialect, long texts included', () => {
    fc.assert(
      fc.property(asked, (questions) => answersAsFreshReading(questions, tokenize)),
      { seed: SEED, numRuns: propertyRuns(NUM_RUNS) },
    );
  });

  it('kill check: a memo keyed by the text alone, not by the dialect, is caught', () => {
    expectCaught(
      fc.property(asked, (questions) => answersAsFreshReading(questions, memoByTextOnly())),
      { seed: SEED, numRuns: propertyRuns(NUM_RUNS) },
    );
  });

  it('hands the same frozen tokens for a text asked again, which no caller can change', () => {
    const sql = 'SELECT a, "b" FROM t -- kept';
    const first = tokenize(sql, 'mysql');
    expect(tokenize(sql.slice(0, 10) + sql.slice(10), 'mysql')).toBe(first);
    expect(tokenize(sql, 'duckdb')).not.toBe(first);
    expect(() => (first as Token[]).push({ kind: 'blank', start: 0, end: 1 })).toThrow(TypeError);
    expect(significant(first)).toBe(significant(first));
  });

  it('keeps at most eight texts, and of those longer than 8192 characters only the latest', () => {
    const short = 'SELECT 1 AS kept';
    const first = tokenize(short, 'mysql');
    for (let n = 0; n < 8; n++) tokenize(`SELECT ${n} AS filler`, 'mysql');
    expect(tokenize(short, 'mysql')).not.toBe(first);
    expect(tokenize(short, 'mysql')).toEqual(first);

    const long = `SELECT 1${' '.repeat(9000)}`;
    const longFirst = tokenize(long, 'duckdb');
    expect(tokenize(long, 'duckdb')).toBe(longFirst);
    tokenize(`SELECT 2${' '.repeat(9000)}`, 'duckdb');
    expect(tokenize(long, 'duckdb')).not.toBe(longFirst);
    expect(tokenize(long, 'duckdb')).toEqual(longFirst);
  });
});
