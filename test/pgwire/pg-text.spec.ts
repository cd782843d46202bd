/**
 * PostgreSQL's SQL text as the engine reads it (src/pgwire/session/pgText.ts): statements split at
 * their top-level semicolons, and only what the two dialects disagree on rewritten.
 */
import { commandTag, readStatements, type ConnectionValues } from '../../src/pgwire/session/pgText';
import { SqlSyntaxError } from '../../src/shared/sqlTokens';

/** A connection's values, with a user name that needs its quote doubled when written in. */
const connection: ConnectionValues = {
  version: 'PostgreSQL 16.0 (test)',
  database: 'sales',
  schema: 'sales',
  user: "o'neil",
  backendPid: 4711,
  setting: (name) => ({ timezone: 'UTC', application_name: 'psql' })[name.toLowerCase()],
};

const engineTexts = (sql: string) => readStatements(sql, connection).map((s) => s.engineText);

describe('reading a query text into statements', () => {
  it('splits at semicolons outside strings, quoted identifiers and comments', () => {
    const statements = readStatements(
      `SELECT 1; SELECT ';' AS s; SELECT "a;b" FROM t -- not here;
       ; /* nor ; here */ SELECT 'it''s; still' AS q`,
    );
    expect(statements.map((s) => s.original)).toEqual([
      'SELECT 1',
      "SELECT ';' AS s",
      'SELECT "a;b" FROM t -- not here;',
      "/* nor ; here */ SELECT 'it''s; still' AS q",
    ]);
    expect(statements.map((s) => s.words[0])).toEqual(['SELECT', 'SELECT', 'SELECT', 'SELECT']);
  });

  it('drops empty statements: a text of semicolons and blanks has none', () => {
    expect(readStatements(' ;; ;\n')).toEqual([]);
    expect(readStatements('-- only a comment')).toEqual([]);
  });

  it('keeps a dollar-quoted string whole, as PostgreSQL (and DuckDB) read it', () => {
    const statements = readStatements('SELECT $$a;b$$ AS v; SELECT $tag$c;d$tag$ AS w');
    expect(statements.map((s) => s.original)).toEqual(['SELECT $$a;b$$ AS v', 'SELECT $tag$c;d$tag$ AS w']);
  });

  it("gives the engine a dollar-quoted string's content as a plain string, quotes, backslashes and $$ inside included", () => {
    const [first, second] = readStatements("SELECT $x$it's \\ $$ ok$x$ AS v, $1; SELECT $$a$$");
    expect(first!.engineText).toBe("SELECT 'it''s \\\\ $$ ok' AS v, :__pg_param_1");
    expect(first!.paramCount).toBe(1);
    expect(second!.engineText).toBe("SELECT 'a'");
    expect(() => readStatements('SELECT $$open')).toThrow(
      /unterminated dollar-quoted string starting at character 8/,
    );
  });

  it("reads an escape string (E'…') to its real end: a backslashed quote does not close it", () => {
    const statements = readStatements("SELECT E'it\\'s; here\\n' AS e; SELECT 2");
    expect(statements.map((s) => s.engineText)).toEqual(["SELECT 'it\\'s; here\\n' AS e", 'SELECT 2']);
  });

  it('splits where PostgreSQL splits: a line comment ends at \\r too, block comments nest', () => {
    expect(readStatements('SELECT 1 AS a --\r; SELECT 2 AS b').map((s) => s.engineText)).toEqual([
      'SELECT 1 AS a --',
      'SELECT 2 AS b',
    ]);
    expect(
      readStatements("SELECT 1 AS a /* /* */ ' */ ; SELECT 2 AS b; SELECT 3 AS c -- '").map(
        (s) => s.words[1],
      ),
    ).toEqual(['1', '2', '3']);
  });

  it('refuses a string or identifier never closed, saying where it starts', () => {
    expect(() => readStatements("SELECT 1; SELECT 'open")).toThrow(
      new SqlSyntaxError("Unterminated ' quoted text starting at character 18", 17),
    );
    expect(() => readStatements('SELECT "open')).toThrow(
      /Unterminated " quoted identifier starting at character 8/,
    );
  });
});

describe('translating a statement to the engine dialect', () => {
  it('writes "identifiers" in backticks, "" as one quote and a backtick doubled', () => {
    expect(engineTexts('SELECT "x""y", "a`b", "Mixed Case" FROM "T"')).toEqual([
      'SELECT `x"y`, `a``b`, `Mixed Case` FROM `T`',
    ]);
  });

  it('doubles backslashes inside strings (standard strings have no escapes) and leaves doubled quotes', () => {
    expect(engineTexts("SELECT 'a\\b', 'it''s', 'C:\\\\dir\\'")).toEqual([
      "SELECT 'a\\\\b', 'it''s', 'C:\\\\\\\\dir\\\\'",
    ]);
  });

  it('names $n parameters for the engine and counts the highest, not those inside strings', () => {
    const [statement] = readStatements("SELECT $1 AS a, $3 AS c, '$2' AS literal, $1 + 1 AS again");
    expect(statement).toMatchObject({
      engineText:
        "SELECT :__pg_param_1 AS a, :__pg_param_3 AS c, '$2' AS literal, :__pg_param_1 + 1 AS again",
      paramCount: 3,
    });
    expect(readStatements('SELECT 1')[0]!.paramCount).toBe(0);
  });

  it('marks the statements a connection value is written into, and only those', () => {
    const values = {
      version: 'v',
      database: 'd',
      schema: 's',
      user: 'u',
      backendPid: 7,
      setting: () => 'x',
    };
    const read = (sql: string) => readStatements(sql, values).map((s) => s.readsConnection);
    expect(
      read("SELECT current_user; SELECT 1; SELECT current_setting('a'); SELECT t.version() FROM t"),
    ).toEqual([true, false, true, false]);
    expect(read('SELECT \'current_user\', "version"() AS v, $1')).toEqual([false]);
  });

  it("writes in the connection's values for the functions the engine cannot answer", () => {
    expect(
      engineTexts(
        "SELECT version(), pg_catalog.version(), current_database(), current_schema(), current_user, session_user, current_setting('TimeZone'), current_setting('no_such'), pg_backend_pid()",
      ),
    ).toEqual([
      "SELECT 'PostgreSQL 16.0 (test)', 'PostgreSQL 16.0 (test)', 'sales', 'sales', 'o''neil', 'o''neil', 'UTC', NULL, 4711",
    ]);
    expect(engineTexts('select Version ( )')).toEqual(["select 'PostgreSQL 16.0 (test)'"]);
  });

  it('leaves columns and methods of the same names alone: t.version(), t.current_user, a string', () => {
    const text = "SELECT t.version(), t.current_user, 'version()' FROM t";
    expect(engineTexts(text)).toEqual([text]);
  });

  it('without connection values, writes none in', () => {
    expect(readStatements('SELECT version()')[0]!.engineText).toBe('SELECT version()');
  });

  it('keeps the words for classification, upper-cased, with those a translation swallowed', () => {
    const [statement] = readStatements('select current_setting(\'x\') from "T"', connection);
    expect(statement!.words).toEqual(['SELECT', 'CURRENT_SETTING', '(', "'x'", ')', 'FROM', '"T"']);
    expect(statement!.parts).toEqual(['select', 'current_setting', '(', "'x'", ')', 'from', '"T"']);
  });
});

describe('command tags', () => {
  it.each([
    [['SELECT', '1'], 5, true, 'SELECT 5'],
    [['SHOW', 'DATABASES'], 3, true, 'SHOW'],
    [['INSERT', 'INTO', 't'], 3, false, 'INSERT 0 3'],
    [['UPDATE', 't'], 2, false, 'UPDATE 2'],
    [['DELETE', 'FROM', 't'], null, false, 'DELETE 0'],
    [['CREATE', 'OR', 'REPLACE', 'VIEW', 'v'], 0, false, 'CREATE VIEW'],
    [['DROP', 'MODEL', 'IF', 'EXISTS', 'm'], 0, false, 'DROP MODEL'],
    [['CREATE', 'PROJECT', 'p'], 0, false, 'CREATE PROJECT'],
    [['SET', 'x'], 0, false, 'SET'],
  ] as const)('%j with %s rows (rows returned: %s) is %s', (words, rows, returned, tag) => {
    expect(commandTag(words, rows, returned)).toBe(tag);
  });
});
