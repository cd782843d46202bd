import { querySql } from '../support/app';
import { lines, startFront, type Front } from './support';

describe('MySQL protocol through the mysql command-line client (MariaDB 10.11)', () => {
  let front: Front;

  beforeAll(async () => {
    front = await startFront({ env: { SQL_ROW_LIMIT: '3' } });
  });
  afterAll(() => front.dispose());

  it('answers queries in batch mode, several statements in a row, NULLs as NULL', async () => {
    const out = await front.cli(
      "SELECT 1 AS one, 'two' AS two, NULL AS nothing, 1.5::DECIMAL(5,2) AS price, DATE '2024-02-29' AS day; SELECT @@version_comment LIMIT 1",
    );
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(lines(out.stdout)).toEqual([
      ['one', 'two', 'nothing', 'price', 'day'],
      ['1', 'two', 'NULL', '1.50', '2024-02-29'],
      ['@@version_comment'],
      ['mindledger (MindsDB-compatible)'],
    ]);
  });

  it('prints the error code, SQLSTATE and message the HTTP endpoint gives, and exits 1', async () => {
    const out = await front.cli('SELECT * FROM mindsdb.missing');
    const http = await querySql(front.app, 'SELECT * FROM mindsdb.missing');
    expect(out.code).toBe(1);
    expect(out.stderr.split('\n')).toContain(`ERROR 1146 (42S02) at line 1: ${http.error_message}`);
  });

  it('switches database with the client\'s "use" (COM_INIT_DB) and with --database', async () => {
    const used = await front.cli('use files; SELECT DATABASE(); use nowhere');
    expect(lines(used.stdout)).toEqual([['DATABASE()'], ['files']]);
    expect(used.stderr).toContain('ERROR 1049 (42000)');
    const connected = await front.cli("SHOW TABLES LIKE 'COL%'", ['--database=information_schema']);
    expect(lines(connected.stdout)).toEqual([['Tables_in_information_schema'], ['COLUMNS']]);
  });

  it('shows the connection in "status": server version, user, database, character sets, TLS', async () => {
    const out = await front.cli('status');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/Current database:\s+mindsdb/);
    expect(out.stdout).toMatch(/Current user:\s+analyst@127\.0\.0\.1/);
    expect(out.stdout).toMatch(/Server version:\s+8\.0\.17-mindledger mindledger \(MindsDB-compatible\)/);
    expect(out.stdout).toMatch(/Conn\.\s+characterset:\s+utf8mb4/);
    // The door offers TLS by default (its own certificate), and the CLI switches to it by default.
    expect(out.stdout).toMatch(/SSL:\s+Cipher in use is TLS/);
  });

  it('describes tables: SHOW COLUMNS and SHOW CREATE TABLE', async () => {
    const columns = await front.cli('SHOW COLUMNS FROM mindsdb.skills');
    expect(lines(columns.stdout)).toEqual([
      ['Field', 'Type', 'Null', 'Key', 'Default', 'Extra'],
      ['NAME', 'text', 'YES', '', 'NULL', ''],
      ['PROJECT', 'text', 'YES', '', 'NULL', ''],
      ['TYPE', 'text', 'YES', '', 'NULL', ''],
      ['PARAMS', 'text', 'YES', '', 'NULL', ''],
    ]);
    const create = await front.cli('SHOW CREATE TABLE skills\\G');
    expect(create.stdout).toContain('Create Table: CREATE TABLE `skills` (\n  `NAME` text DEFAULT NULL,');
  });

  it('shows the warning of a result cut at the row limit (--show-warnings)', async () => {
    const out = await front.cli('SELECT * FROM range(10)', ['--show-warnings']);
    expect(out.code).toBe(0);
    expect(out.stdout.split('\n').slice(0, 4)).toEqual(['range', '0', '1', '2']);
    expect(out.stdout).toContain('Warning (Code 1105): The result was cut after 3 rows');
  });

  it('logs in with caching_sha2_password when the client starts with it', async () => {
    for (const password of [[], ['-psecret']]) {
      const out = await front.cli('SELECT USER()', ['--default-auth=caching_sha2_password', ...password]);
      expect(out).toMatchObject({ code: 0, stdout: 'USER()\nanalyst@127.0.0.1\n' });
    }
  });
});
