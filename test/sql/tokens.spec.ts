/**
 * The one SQL tokenizer and the rewrites built on it: each rewrite changes only what it means to,
 * and never anything inside a string literal.
 */
import fc from 'fast-check';
import { DuckDBListValue } from '@duckdb/node-api';
import { duckDbTextForMysql, MYSQL_DIALECT, POSTGRES_DIALECT } from '../../src/integrations/dialects';
import { extractNativeQueries, positional, stripQualifier } from '../../src/sql/faces/integration/federation';
import { quoteModelVersions, toDuckDbDialect } from '../../src/sql/lexical';
import { addModelJoinConditions } from '../../src/sql/faces/model/modelJoins';
import { bindParameters } from '../../src/sql/pipeline/parameters';
import { textOf, tokenize } from '../../src/shared/sqlTokens';

describe('the tokenizer', () => {
  it('splits any text into tokens that cover it exactly, in order (DuckDB dialect)', () =>
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (sql) => {
        const tokens = tokenize(sql, 'duckdb');
        expect(tokens.map((t) => textOf(sql, t)).join('')).toBe(sql);
        for (let i = 1; i < tokens.length; i++) expect(tokens[i]!.start).toBe(tokens[i - 1]!.end);
      }),
      { seed: 20261123, numRuns: 500 },
    ));

  it('covers MySQL text exactly too, or refuses an unterminated quote by name', () =>
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z '"`:@\\().,-]{0,40}$/), (sql) => {
        try {
          expect(
            tokenize(sql, 'mysql')
              .map((t) => textOf(sql, t))
              .join(''),
          ).toBe(sql);
        } catch (error) {
          expect((error as Error).message).toMatch(
            /^Unterminated [`'"] quoted text starting at character \d+$/,
          );
        }
      }),
      { seed: 20261123, numRuns: 500 },
    ));

  it('reads placeholders, casts, session variables and comments as MySQL clients mean them', () => {
    const sql = "select a::int, @@version, :p, @q -- :no\n/* :no */ 'x:no' from t";
    const kinds = tokenize(sql, 'mysql')
      .filter((t) => t.kind !== 'blank')
      .map((t) => `${t.kind}:${textOf(sql, t)}`);
    expect(kinds).toContain('placeholder::p');
    expect(kinds).toContain('placeholder:@q');
    expect(kinds.filter((k) => k.startsWith('placeholder'))).toHaveLength(2);
    expect(kinds).toContain("string:'x:no'");
  });
});

describe('rewrites on the tokens', () => {
  it('translates MySQL quoting: backticks and aliases become identifiers, other double quotes strings', () => {
    expect(toDuckDbDialect('select `a b`, "x" as "y", 1 "two" from t where n = "v" and m = :p').sql).toBe(
      `select "a b", 'x' as "y", 1 "two" from t where n = 'v' and m = $p`,
    );
    expect(toDuckDbDialect("select 'it''s', 'a\\'b' /* c */ -- d").sql).toBe("select 'it''s', 'a''b'   ");
    expect(() => toDuckDbDialect("select 'open")).toThrow(
      /Unterminated ' quoted text starting at character 8/,
    );
  });

  it('quotes a model version only right after project.model.', () => {
    expect(quoteModelVersions('SELECT * FROM p.m.3 JOIN q.n.12 AS x WHERE a = 1.5')).toBe(
      'SELECT * FROM p.m."3" JOIN q.n."12" AS x WHERE a = 1.5',
    );
    expect(quoteModelVersions("SELECT 'p.m.3', p . m.3, p.m .3")).toBe('SELECT \'p.m.3\', p . m."3", p.m .3');
  });

  it('binds a list parameter as one value, IN :ids and IN (:ids) alike, never inside strings', () => {
    const bound = bindParameters(
      "SELECT * FROM t WHERE a IN $ids AND b IN ( $ids ) AND c = '$ids' AND d = $one",
      ['ids', 'one'],
      { ids: [1, 2], one: 'x' },
      100,
    );
    expect(bound.sql).toBe(
      "SELECT * FROM t WHERE a IN (SELECT unnest($ids)) AND b IN (SELECT unnest($ids)) AND c = '$ids' AND d = $one",
    );
  });

  it('strips an integration qualifier from names, not from strings or later parts of names', () => {
    expect(stripQualifier(`SELECT pg.t.a, "pg"."u", 'pg.x' FROM pg . t JOIN other.pg AS z`, 'pg')).toBe(
      `SELECT t.a, "u", 'pg.x' FROM t JOIN other.pg AS z`,
    );
  });

  it('turns identifiers into backticks for MySQL, and strings into MySQL literals of the same value', () => {
    expect(duckDbTextForMysql(`SELECT "a""b", 'say "hi"', 'it''s', 'a\\b?' FROM "t\`x"`)).toBe(
      `SELECT \`a"b\`, 'say "hi"', 'it''s', _utf8mb4 X'${Buffer.from('a\\b?').toString('hex')}' FROM \`t\`\`x\``,
    );
  });

  it("makes placeholders the database's own, lists expanded, and leaves $ and ? in strings alone", () => {
    const list = new DuckDBListValue([1n, 2n, 3n]);
    const sql = "SELECT * FROM t WHERE a IN (SELECT unnest($ids)) AND b = $one AND c = '$one?'";
    expect(positional(sql, { ids: list, one: 'x' }, MYSQL_DIALECT)).toEqual({
      text: "SELECT * FROM t WHERE a IN (?, ?, ?) AND b = ? AND c = '$one?'",
      params: [1n, 2n, 3n, 'x'],
    });
    expect(positional(sql, { ids: list, one: 'x' }, POSTGRES_DIALECT)).toEqual({
      text: "SELECT * FROM t WHERE a IN ($1, $2, $3) AND b = $4 AND c = '$one?'",
      params: [1n, 2n, 3n, 'x'],
    });
  });

  it('cuts out native queries with balanced parentheses and quotes respected', async () => {
    const { sql, natives } = await extractNativeQueries(
      "SELECT * FROM pg (SELECT f(')') FROM x WHERE y IN (1, 2)) AS n JOIN files.z ON TRUE",
      async (name) => (name === 'pg' ? 'pg' : undefined),
    );
    expect(sql).toBe('SELECT * FROM __native_0 AS n JOIN files.z ON TRUE');
    expect(natives.get('__native_0')).toEqual({
      integration: 'pg',
      sql: "SELECT f(')') FROM x WHERE y IN (1, 2)",
    });
  });

  it('adds ON TRUE after a joined model only', async () => {
    const isModel = async (_schema: string | null, table: string) => table === 'm';
    expect(await addModelJoinConditions('SELECT * FROM t JOIN p.m AS x JOIN u ON u.a = t.a', isModel)).toBe(
      'SELECT * FROM t JOIN p.m AS x ON TRUE JOIN u ON u.a = t.a',
    );
  });
});

describe('MySQL string escapes', () => {
  it('become the characters they stand for in DuckDB text', () => {
    expect(toDuckDbDialect(String.raw`select 'it\'s', "say \"hi\"", 'C:\\', 'a\nb', 'x\%y'`).sql).toBe(
      "select 'it''s', 'say \"hi\"', 'C:\\', 'a\nb', 'x\\%y'",
    );
  });
});
