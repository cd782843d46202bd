/**
 * The tokenizer's `mysql-client` dialect: what a client sends the MySQL front door. It reads MySQL's
 * own syntax (`#` comments, `?`, `@@system` and `@user` variables, numbers, non-ASCII names) and
 * agrees with the `mysql` dialect on everything else.
 */
import fc from 'fast-check';
import { SqlSyntaxError, textOf, tokenize, type Dialect } from '../../src/shared/sqlTokens';

const kinds = (sql: string, dialect: Dialect = 'mysql-client') =>
  tokenize(sql, dialect)
    .filter((t) => t.kind !== 'blank')
    .map((t) => `${t.kind}:${textOf(sql, t)}`);

describe('the mysql-client dialect', () => {
  it('reads ? placeholders and # comments, which the mysql dialect leaves as symbols', () => {
    const sql = "SELECT ?, '?', `?` # a ? comment\nFROM t WHERE a = :p -- ?";
    expect(kinds(sql)).toEqual([
      'word:SELECT',
      'placeholder:?',
      'symbol:,',
      "string:'?'",
      'symbol:,',
      'identifier:`?`',
      'comment:# a ? comment',
      'word:FROM',
      'word:t',
      'word:WHERE',
      'word:a',
      'symbol:=',
      'placeholder::p',
      'comment:-- ?',
    ]);
    expect(kinds('SELECT ? # x', 'mysql')).toEqual(['word:SELECT', 'symbol:?', 'symbol:#', 'word:x']);
  });

  it('tells @@system variables from @user variables, quoted names included', () => {
    expect(kinds("SELECT @@version, @@session.sql_mode, @x, @a.b, @`my var`, @'it''s', @\"q\" @ 1")).toEqual([
      'word:SELECT',
      'systemVariable:@@version',
      'symbol:,',
      'systemVariable:@@session.sql_mode',
      'symbol:,',
      'userVariable:@x',
      'symbol:,',
      'userVariable:@a.b',
      'symbol:,',
      'userVariable:@`my var`',
      'symbol:,',
      "userVariable:@'it''s'",
      'symbol:,',
      'userVariable:@"q"',
      'symbol:@',
      'number:1',
    ]);
  });

  it('reads numbers whole, and names that start with a digit as words', () => {
    expect(kinds('SELECT 1, 1.5, .5, 2e-3, 3E+2, 1abc, 7e, t.5, x1 LIMIT 0')).toEqual([
      'word:SELECT',
      'number:1',
      'symbol:,',
      'number:1.5',
      'symbol:,',
      'number:.5',
      'symbol:,',
      'number:2e-3',
      'symbol:,',
      'number:3E+2',
      'symbol:,',
      'word:1abc',
      'symbol:,',
      'word:7e',
      'symbol:,',
      'word:t',
      'symbol:.',
      'number:5',
      'symbol:,',
      'word:x1',
      'word:LIMIT',
      'number:0',
    ]);
  });

  it("keeps MySQL's name characters in words ($, letters past ASCII)", () => {
    expect(kinds('SELECT @@version AS versión, a$b FROM café')).toEqual([
      'word:SELECT',
      'systemVariable:@@version',
      'word:AS',
      'word:versión',
      'symbol:,',
      'word:a$b',
      'word:FROM',
      'word:café',
    ]);
  });

  it('ends strings where MySQL does: backslash escapes and doubled quotes stay inside', () => {
    expect(kinds(`SELECT 'it\\'s; ok', "say \\"hi\\"", 'a''b'; SELECT 2`)).toEqual([
      'word:SELECT',
      `string:'it\\'s; ok'`,
      'symbol:,',
      `dquoted:"say \\"hi\\""`,
      'symbol:,',
      "string:'a''b'",
      'symbol:;',
      'word:SELECT',
      'number:2',
    ]);
  });

  it('refuses an unterminated quote, saying where it starts', () => {
    const refusal = (sql: string) => {
      try {
        tokenize(sql, 'mysql-client');
      } catch (error) {
        return error instanceof SqlSyntaxError ? { message: error.message, offset: error.offset } : error;
      }
      return undefined;
    };
    expect(refusal("SELECT 1; SELECT 'open")).toEqual({
      message: "Unterminated ' quoted text starting at character 18",
      offset: 17,
    });
    expect(refusal('SET @`x = 1')).toEqual({
      message: 'Unterminated ` quoted text starting at character 6',
      offset: 5,
    });
    expect(refusal("SELECT 'a' # it's a comment")).toBeUndefined();
  });

  it('covers any text exactly, or refuses it at an offset before which the text still reads (property)', () =>
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9 '"`:@?#.\\()é;$-]{0,40}$/), (sql) => {
        try {
          const tokens = tokenize(sql, 'mysql-client');
          expect(tokens.map((t) => textOf(sql, t)).join('')).toBe(sql);
          for (let i = 1; i < tokens.length; i++) expect(tokens[i]!.start).toBe(tokens[i - 1]!.end);
        } catch (error) {
          if (!(error instanceof SqlSyntaxError)) throw error;
          expect(error.message).toMatch(/^Unterminated [`'"] quoted text starting at character \d+$/);
          const before = tokenize(sql.slice(0, error.offset), 'mysql-client');
          expect(before.map((t) => textOf(sql, t)).join('')).toBe(sql.slice(0, error.offset));
        }
      }),
      { seed: 20261124, numRuns: 1000 },
    ));

  it('agrees with the mysql dialect on text without MySQL-client syntax (property)', () =>
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z '"`:().,=\\-]{0,40}$/), (sql) => {
        const read = (dialect: Dialect) => {
          try {
            return tokenize(sql, dialect);
          } catch (error) {
            return (error as Error).message;
          }
        };
        expect(read('mysql-client')).toEqual(read('mysql'));
      }),
      { seed: 20261124, numRuns: 1000 },
    ));
});
