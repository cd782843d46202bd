import type mysql from 'mysql2/promise';
import { querySql } from '../support/app';
import { startFront, type Front } from './support';

/** Every kind of column the engine answers, with a NULL of each beside it. */
const EVERY_TYPE = `
  SELECT 42::TINYINT AS tiny, -2::SMALLINT AS small, -3 AS int, 9007199254740993::BIGINT AS big,
         18446744073709551615::UBIGINT AS ubig, 255::UTINYINT AS utiny, 170141183460469231731687303715884105727::HUGEINT AS huge,
         1.5::DECIMAL(10,2) AS dec, 0.25::FLOAT AS f, 1.5e300::DOUBLE AS d, true AS yes, false AS no,
         DATE '2024-01-02' AS day, TIMESTAMP '2024-01-02 03:04:05.5' AS ts, TIME '01:02:03' AS t,
         'héllo ✓' AS s, [1, 2, NULL] AS list, {'x': 1, 'y': 'z'} AS struct, MAP {'k': 1} AS map,
         'x'::BLOB AS bytes, INTERVAL 1 DAY AS span,
         NULL::INTEGER AS null_int, NULL::DECIMAL(10,2) AS null_dec, NULL::DATE AS null_day,
         NULL::TIMESTAMP AS null_ts, NULL::VARCHAR AS null_s, NULL::INTEGER[] AS null_list`;

const expectedRow = {
  tiny: 42,
  small: -2,
  int: -3,
  big: '9007199254740993',
  ubig: '18446744073709551615',
  utiny: 255,
  dec: '1.50',
  f: 0.25,
  d: 1.5e300,
  yes: 1,
  no: 0,
  day: '2024-01-02',
  ts: '2024-01-02 03:04:05.500000',
  t: '01:02:03',
  s: 'héllo ✓',
  list: [1, 2, null],
  struct: { x: 1, y: 'z' },
  map: { k: 1 },
  bytes: Buffer.from('x'),
  span: '1 day',
  null_int: null,
  null_dec: null,
  null_day: null,
  null_ts: null,
  null_s: null,
  null_list: null,
};

describe('MySQL protocol through the mysql2 driver (SQLite store)', () => {
  let front: Front;
  let c: mysql.Connection;

  beforeAll(async () => {
    front = await startFront({ env: { SQL_ROW_LIMIT: '100000' } });
    c = await front.connect({
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      multipleStatements: true,
    });
  });
  afterAll(() => front.dispose());

  describe('given a text query (COM_QUERY)', () => {
    it('answers every column type with its MySQL type, NULLs included', async () => {
      const [rows, fields] = await c.query<mysql.RowDataPacket[]>(EVERY_TYPE);
      expect(rows).toHaveLength(1);
      // HUGEINT past 2^64 is a DECIMAL; the engine keeps its value as a JavaScript number.
      const { huge, ...rest } = rows[0]!;
      expect(rest).toEqual(expectedRow);
      expect(typeof huge).toBe('string');
      expect(Object.fromEntries(fields.map((f) => [f.name, f.type]))).toMatchObject({
        tiny: 1,
        small: 2,
        int: 3,
        big: 8,
        dec: 246,
        f: 4,
        d: 5,
        day: 10,
        ts: 12,
        t: 11,
        s: 253,
        list: 245,
        bytes: 252,
      });
    });

    it('answers what the HTTP endpoint answers for the same query', async () => {
      const sql = 'SELECT NAME, TYPE FROM information_schema.DATABASES ORDER BY NAME';
      const [rows] = await c.query<mysql.RowDataPacket[]>({ sql, rowsAsArray: true });
      const http = await querySql(front.app, sql);
      expect(rows).toEqual(http.data);
    });

    it('sends the engine error code, with its SQLSTATE, in an error packet', async () => {
      await expect(c.query('SELECT nope')).rejects.toMatchObject({
        errno: 1054,
        sqlState: '42S22',
        message: expect.stringContaining('"nope"'),
      });
      await expect(c.query('SELECT * FROM mindsdb.missing')).rejects.toMatchObject({
        errno: 1146,
        sqlState: '42S02',
      });
      await expect(c.query('DELETE FROM mindsdb.models')).rejects.toMatchObject({ errno: 1227 });
      await expect(c.query('SELEC 1')).rejects.toMatchObject({ errno: 1064, sqlState: '42000' });
      const http = await querySql(front.app, 'SELECT nope');
      await expect(c.query('SELECT nope')).rejects.toMatchObject({
        errno: http.error_code,
        message: http.error_message,
      });
    });

    it('answers several statements in one text, one result each, stopping at the first error', async () => {
      const [results] = await c.query<mysql.RowDataPacket[][]>(
        'SELECT 1 AS a; SELECT 2 AS b; SHOW DATABASES',
      );
      expect(results.slice(0, 2)).toEqual([[{ a: 1 }], [{ b: 2 }]]);
      expect(results[2]!.map((r) => r.Database)).toContain('mindsdb');
      await expect(c.query('SELECT 1; SELECT nope; SELECT 3')).rejects.toMatchObject({ errno: 1054 });
      const [after] = await c.query<mysql.RowDataPacket[]>('SELECT 4 AS d');
      expect(after).toEqual([{ d: 4 }]);
    });

    it('refuses a quote never closed as a syntax error, after the statements before it', async () => {
      const http = await querySql(front.app, "SELECT 'open");
      await expect(c.query("SELECT 1 AS a; SELECT 'open")).rejects.toMatchObject({
        errno: 1064,
        message: http.error_message,
      });
      const [after] = await c.query<mysql.RowDataPacket[]>('SELECT 4 AS d');
      expect(after).toEqual([{ d: 4 }]);
    });

    it('streams a 100,000-row result whole', async () => {
      const [rows] = await c.query<mysql.RowDataPacket[]>({
        sql: 'SELECT * FROM range(100000)',
        rowsAsArray: true,
      });
      expect(rows).toHaveLength(100000);
      expect(rows[0]).toEqual(['0']);
      expect(rows[99999]).toEqual(['99999']);
    });

    it('cuts a result at the row limit and says so in a warning', async () => {
      const [rows] = await c.query<mysql.RowDataPacket[]>({
        sql: 'SELECT * FROM range(100001)',
        rowsAsArray: true,
      });
      expect(rows).toHaveLength(100000);
      const [warnings] = await c.query<mysql.RowDataPacket[]>('SHOW WARNINGS');
      expect(warnings).toEqual([
        { Level: 'Warning', Code: 1105, Message: expect.stringContaining('cut after 100000 rows') },
      ]);
      const [[count]] = await c.query<mysql.RowDataPacket[]>('SELECT @@warning_count AS n');
      expect(count).toEqual({ n: '1' });
      await c.query('SELECT 1');
      expect((await c.query<mysql.RowDataPacket[]>('SHOW WARNINGS'))[0]).toEqual([]);
    });
  });

  describe('given prepared statements (COM_STMT_PREPARE / EXECUTE)', () => {
    it('answers every column type in binary rows', async () => {
      const [rows] = await c.execute<mysql.RowDataPacket[]>(EVERY_TYPE);
      const { huge, ...rest } = rows[0]!;
      expect(rest).toEqual(expectedRow);
      expect(typeof huge).toBe('string');
    });

    it('binds ? parameters of every kind as the engine parameters', async () => {
      const [rows] = await c.execute<mysql.RowDataPacket[]>(
        'SELECT ? AS n, ? AS s, ? AS z, ? AS f, ? AS b, ? AS d, ? + 1 AS sum, ? IS NULL AS isnull',
        [7, "it's", null, 1.25, true, '2024-01-02', 41, null],
      );
      // Integers are bound as their literals would be (INTEGER), so they come back as numbers, as
      // MySQL's own BIGINT columns do (a HUGEINT would be a DECIMAL's text).
      expect(rows).toEqual([
        { n: 7, s: "it's", z: null, f: 1.25, b: 1, d: '2024-01-02', sum: 42, isnull: 1 },
      ]);
      const call = front.calls.at(-1)!;
      expect(call.query).toContain(':__mysql_param_1');
      expect(call.params).toMatchObject({
        __mysql_param_1: 7,
        __mysql_param_2: "it's",
        __mysql_param_3: null,
      });
    });

    it('reuses a statement with new values, and reports unknown parameters as the engine does', async () => {
      for (const name of ['mindsdb', 'files'])
        expect(
          (
            await c.execute<mysql.RowDataPacket[]>(
              'SELECT NAME FROM information_schema.DATABASES WHERE NAME = ?',
              [name],
            )
          )[0],
        ).toEqual([{ NAME: name }]);
      await expect(c.execute('SELECT :missing AS x')).rejects.toMatchObject({ errno: 1318 });
    });

    it('keeps ? inside string literals as text', async () => {
      const [rows] = await c.execute<mysql.RowDataPacket[]>("SELECT '?' AS q, ? AS v", ['x']);
      expect(rows).toEqual([{ q: '?', v: 'x' }]);
    });
  });

  describe('given the statements tools send when they connect and browse', () => {
    it('answers the variables Connector/J and mysql2 read on connect', async () => {
      const [rows] = await c.query<mysql.RowDataPacket[]>(
        'SELECT @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, @@character_set_connection AS character_set_connection, @@character_set_results AS character_set_results, @@character_set_server AS character_set_server, @@collation_server AS collation_server, @@init_connect AS init_connect, @@interactive_timeout AS interactive_timeout, @@license AS license, @@lower_case_table_names AS lower_case_table_names, @@max_allowed_packet AS max_allowed_packet, @@net_write_timeout AS net_write_timeout, @@performance_schema AS performance_schema, @@sql_mode AS sql_mode, @@system_time_zone AS system_time_zone, @@time_zone AS time_zone, @@transaction_isolation AS transaction_isolation, @@wait_timeout AS wait_timeout',
      );
      expect(rows).toEqual([
        {
          auto_increment_increment: '1',
          character_set_client: 'utf8mb4',
          character_set_connection: 'utf8mb4',
          character_set_results: 'utf8mb4',
          character_set_server: 'utf8mb4',
          collation_server: 'utf8mb4_general_ci',
          init_connect: '',
          interactive_timeout: '28800',
          license: 'GPL',
          lower_case_table_names: '1',
          max_allowed_packet: '67108864',
          net_write_timeout: '60',
          performance_schema: '0',
          sql_mode: 'ANSI_QUOTES',
          system_time_zone: 'UTC',
          time_zone: 'SYSTEM',
          transaction_isolation: 'REPEATABLE-READ',
          wait_timeout: '28800',
        },
      ]);
      await expect(c.query('SELECT @@no_such_variable')).rejects.toMatchObject({
        errno: 1193,
        message: "Unknown system variable 'no_such_variable'",
      });
    });

    it('keeps what SET changes for this connection only', async () => {
      const other = await front.connect();
      await c.query(
        "SET NAMES latin1, SESSION sql_mode = 'TRADITIONAL', @@session.autocommit = OFF, @n = 40 + 2",
      );
      const [rows] = await c.query<mysql.RowDataPacket[]>(
        'SELECT @@character_set_client AS cs, @@sql_mode AS mode, @@autocommit AS ac',
      );
      expect(rows).toEqual([{ cs: 'latin1', mode: 'TRADITIONAL', ac: '0' }]);
      // A user variable is a parameter the engine binds.
      expect((await c.query<mysql.RowDataPacket[]>('SELECT @n + 1 AS m, @unset AS u'))[0]).toEqual([
        { m: 43, u: null },
      ]);
      expect((await other.query<mysql.RowDataPacket[]>('SELECT @@sql_mode AS mode'))[0]).toEqual([
        { mode: 'ANSI_QUOTES' },
      ]);
      await c.query('SET sql_mode = DEFAULT, NAMES utf8mb4, autocommit = 1');
      expect((await c.query<mysql.RowDataPacket[]>('SELECT @@sql_mode AS mode'))[0]).toEqual([
        { mode: 'ANSI_QUOTES' },
      ]);
    });

    it("refuses SET of the engine's own settings as the engine does", async () => {
      const http = await querySql(front.app, 'SET threads = 1');
      await expect(c.query('SET autocommit = 1, threads = 1')).rejects.toMatchObject({
        errno: http.error_code,
      });
    });

    it('answers DATABASE(), USER(), CONNECTION_ID() and VERSION() for this connection, alone or inside a query', async () => {
      const [rows] = await c.query<mysql.RowDataPacket[]>(
        'SELECT DATABASE(), USER(), CURRENT_USER(), CONNECTION_ID() AS id, VERSION() AS v',
      );
      expect(rows).toEqual([
        {
          'DATABASE()': 'mindsdb',
          'USER()': 'analyst@127.0.0.1',
          'CURRENT_USER()': 'analyst@%',
          id: String(c.threadId),
          v: '8.0.17-mindledger',
        },
      ]);
      const [tables] = await c.query<mysql.RowDataPacket[]>(
        "SELECT TABLE_NAME, DATABASE() FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'mo%'",
      );
      // Every project has models and models_versions, as MindsDB's
      expect(tables).toEqual([
        { TABLE_NAME: 'models', 'DATABASE()': 'mindsdb' },
        { TABLE_NAME: 'models_versions', 'DATABASE()': 'mindsdb' },
      ]);
    });

    it('changes the database with USE, for this connection (the engine checks it exists)', async () => {
      const other = await front.connect({ database: 'files' });
      await c.query('USE information_schema');
      expect((await c.query<mysql.RowDataPacket[]>('SELECT DATABASE() AS db'))[0]).toEqual([
        { db: 'information_schema' },
      ]);
      expect(
        (await c.query<mysql.RowDataPacket[]>('SHOW TABLES'))[0].map((r) => r.Tables_in_information_schema),
      ).toContain('SCHEMATA');
      expect((await other.query<mysql.RowDataPacket[]>('SELECT DATABASE() AS db'))[0]).toEqual([
        { db: 'files' },
      ]);
      await expect(c.query('USE nowhere')).rejects.toMatchObject({ errno: 1049 });
      expect((await c.query<mysql.RowDataPacket[]>('SELECT DATABASE() AS db'))[0]).toEqual([
        { db: 'information_schema' },
      ]);
      await c.query('USE mindsdb');
      await expect(front.connect({ database: 'nowhere' })).rejects.toMatchObject({ errno: 1049 });
    });

    it('answers SHOW VARIABLES with LIKE and WHERE', async () => {
      const [like] = await c.query<mysql.RowDataPacket[]>("SHOW VARIABLES LIKE 'character\\_set\\_c%'");
      expect(like).toEqual([
        { Variable_name: 'character_set_client', Value: 'utf8mb4' },
        { Variable_name: 'character_set_connection', Value: 'utf8mb4' },
      ]);
      const [where] = await c.query<mysql.RowDataPacket[]>(
        "SHOW SESSION VARIABLES WHERE Variable_name IN ('version_comment', 'lower_case_table_names')",
      );
      expect(where).toEqual([
        { Variable_name: 'lower_case_table_names', Value: '1' },
        { Variable_name: 'version_comment', Value: 'mindledger (MindsDB-compatible)' },
      ]);
    });

    it('answers SHOW [FULL] TABLES, SHOW COLUMNS, SHOW CREATE TABLE, SHOW INDEX and SHOW TABLE STATUS', async () => {
      const [tables] = await c.query<mysql.RowDataPacket[]>('SHOW FULL TABLES FROM mindsdb');
      expect(tables).toContainEqual({ Tables_in_mindsdb: 'skills', Table_type: 'BASE TABLE' });
      const [columns] = await c.query<mysql.RowDataPacket[]>('SHOW COLUMNS FROM skills');
      expect(columns).toEqual(
        ['NAME', 'PROJECT', 'TYPE', 'PARAMS'].map((Field) => ({
          Field,
          Type: 'text',
          Null: 'YES',
          Key: '',
          Default: null,
          Extra: '',
        })),
      );
      const [full] = await c.query<mysql.RowDataPacket[]>(
        "SHOW FULL COLUMNS FROM models FROM mindsdb LIKE 'VERS%'",
      );
      expect(full).toEqual([
        {
          Field: 'VERSION',
          Type: 'int',
          Collation: null,
          Null: 'YES',
          Key: '',
          Default: null,
          Extra: '',
          Privileges: 'select',
          Comment: '',
        },
      ]);
      const [[create]] = await c.query<mysql.RowDataPacket[]>('SHOW CREATE TABLE mindsdb.models');
      expect(create!.Table).toBe('models');
      expect(create!['Create Table']).toMatch(/^CREATE TABLE `models` \(\n {2}`NAME` text DEFAULT NULL,\n/);
      expect(create!['Create Table']).toContain('`CREATED_AT` datetime(6) DEFAULT NULL');
      expect((await c.query<mysql.RowDataPacket[]>('SHOW INDEX FROM skills'))[0]).toEqual([]);
      const [status] = await c.query<mysql.RowDataPacket[]>("SHOW TABLE STATUS LIKE 'sk%'");
      expect(status).toEqual([expect.objectContaining({ Name: 'skills', Engine: 'InnoDB', Comment: '' })]);
      await expect(c.query('SHOW COLUMNS FROM nothing_here')).rejects.toMatchObject({ errno: 1146 });
      await expect(c.query('SHOW CREATE DATABASE nowhere')).rejects.toMatchObject({ errno: 1049 });
      const [[db]] = await c.query<mysql.RowDataPacket[]>('SHOW CREATE DATABASE files');
      expect(db).toEqual({
        Database: 'files',
        'Create Database': 'CREATE DATABASE `files` /*!40100 DEFAULT CHARACTER SET utf8mb4 */',
      });
    });

    it('answers information_schema.SCHEMATA, TABLES and COLUMNS through the engine', async () => {
      const [schemata] = await c.query<mysql.RowDataPacket[]>(
        'SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME',
      );
      expect(schemata.map((r) => r.SCHEMA_NAME)).toEqual(['files', 'information_schema', 'mindsdb']);
      const [columns] = await c.query<mysql.RowDataPacket[]>(
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'mindsdb' AND TABLE_NAME = 'skills' ORDER BY ORDINAL_POSITION",
      );
      expect(columns.map((r) => r.COLUMN_NAME)).toEqual(['NAME', 'PROJECT', 'TYPE', 'PARAMS']);
    });

    it('accepts transactions as no-ops (every statement stands alone) and pings', async () => {
      for (const sql of [
        'BEGIN',
        'START TRANSACTION READ ONLY',
        'COMMIT',
        'ROLLBACK WORK',
        'SET autocommit = 0',
      ])
        expect((await c.query<mysql.ResultSetHeader>(sql))[0]).toMatchObject({
          affectedRows: 0,
          warningStatus: 0,
        });
      await expect(c.ping()).resolves.toBe(true);
      await c.query('SET autocommit = 1');
    });

    it('lists connections in SHOW PROCESSLIST', async () => {
      const [rows] = await c.query<mysql.RowDataPacket[]>('SHOW FULL PROCESSLIST');
      expect(rows).toContainEqual(
        expect.objectContaining({
          Id: String(c.threadId),
          User: 'analyst',
          Command: 'Query',
          Info: 'SHOW FULL PROCESSLIST',
        }),
      );
    });
  });
});
