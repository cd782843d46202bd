/**
 * The PostgreSQL door through psql 15 (libpq): -c queries in unaligned output, scripts on standard
 * input with ON_ERROR_STOP, the server's parameters, and what the door refuses.
 */
import { querySql } from '../support/app';
import { startPgFront, type PgFront } from './support';

describe('PostgreSQL protocol through psql 15', () => {
  let front: PgFront;

  beforeAll(async () => {
    front = await startPgFront({ env: { SQL_ROW_LIMIT: '3' } });
  });
  afterAll(() => front.dispose());

  it('answers a -c query in unaligned, tuples-only output: NULL empty, DECIMAL with its scale', async () => {
    const out = await front.psql(
      "SELECT 1 AS one, 'two' AS two, NULL AS nothing, 1.5::DECIMAL(5,2) AS price, DATE '2024-02-29' AS day, true AS yes",
    );
    expect(out).toEqual({ code: 0, stdout: '1|two||1.50|2024-02-29|t\n', stderr: '' });
  });

  it('prints headers and the row count without -t, quoted identifiers as written', async () => {
    const out = await front.psql('SELECT 1 AS "Mixed Case", 2 AS "with ""quote"""', {
      args: ['-P', 'tuples_only=off'],
    });
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout.split('\n')).toEqual(['Mixed Case|with "quote"', '1|2', '(1 row)', '']);
  });

  it('answers every statement of a -c text, in order', async () => {
    const out = await front.psql("SELECT 'a' AS first; SHOW DATABASES; SELECT 42 AS last");
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout.split('\n')).toEqual(['a', 'information_schema', 'files', 'mindsdb', '42', '']);
  });

  it('tells who, where and what: current_user, current_database(), version(), server_version', async () => {
    const out = await front.psql('SELECT current_user, current_database(), version(); SHOW server_version');
    expect(out).toEqual({
      code: 0,
      stdout: 'analyst|mindsdb|PostgreSQL 16.0 (mindledger)\n16.0\n',
      stderr: '',
    });
    const elsewhere = await front.psql('SELECT current_database()', { args: ['-d', 'files'] });
    expect(elsewhere.stdout).toBe('files\n');
  });

  it('stops a script at its failing statement with ON_ERROR_STOP: exit code 3, the error on stderr', async () => {
    const script = [
      '\\set ON_ERROR_STOP 1',
      "SELECT 'first' AS a;",
      'SELECT nope;',
      "SELECT 'never' AS c;",
      '',
    ].join('\n');
    const out = await front.psql(script, { script: true });
    const http = await querySql(front.app, 'SELECT nope');
    expect(out.code).toBe(3);
    expect(out.stdout).toBe('first\n');
    expect(out.stderr).toBe(`ERROR:  ${http.error_message}\nDETAIL:  engine error 1054 in: SELECT nope\n`);
  });

  it('runs a whole script without ON_ERROR_STOP, reporting the error and going on', async () => {
    const out = await front.psql("SELECT 'first';\nSELECT * FROM mindsdb.missing;\nSELECT 'third';\n", {
      script: true,
    });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('first\nthird\n');
    expect(out.stderr).toMatch(/^ERROR: {2}Table mindsdb\.missing does not exist\n/);
  });

  it('prints the WARNING of a result cut at the row limit on stderr', async () => {
    const out = await front.psql('SELECT * FROM range(10)');
    expect(out).toEqual({
      code: 0,
      stdout: '0\n1\n2\n',
      stderr:
        "WARNING:  the result was cut at 3 rows (the server's row limit, SQL_ROW_LIMIT, or its answer size limit)\n",
    });
  });

  it('refuses a client encoding other than UTF8 by name, in SET and at connection', async () => {
    const set = await front.psql("SET client_encoding TO 'LATIN1'");
    expect(set).toEqual({
      code: 1,
      stdout: '',
      stderr: 'ERROR:  client_encoding LATIN1 is not supported: this server sends UTF8 (or SQL_ASCII)\n',
    });
    const utf8 = await front.psql("SET client_encoding TO 'UTF8'; SHOW client_encoding");
    // psql prints a command's tag (SET) as it prints a query's rows.
    expect(utf8).toEqual({ code: 0, stdout: 'SET\nUTF8\n', stderr: '' });
    const atStart = await front.psql('SELECT 1', { env: { PGCLIENTENCODING: 'LATIN1' } });
    expect(atStart.code).toBe(2);
    expect(atStart.stderr).toContain('FATAL:  client_encoding LATIN1 is not supported');
  });

  it('keeps SET parameters for the session and answers RESET with the default', async () => {
    const out = await front.psql(
      "SET application_name = 'report'; SHOW application_name; RESET application_name; SHOW application_name",
      { env: { PGAPPNAME: 'psql-spec' } },
    );
    expect(out).toEqual({ code: 0, stdout: 'SET\nreport\nRESET\npsql-spec\n', stderr: '' });
  });

  it('says the server does not support SSL when psql requires it and no TLS is configured', async () => {
    const out = await front.psql('SELECT 1', { env: { PGSSLMODE: 'require' } });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('server does not support SSL, but SSL was required');
  });
});
