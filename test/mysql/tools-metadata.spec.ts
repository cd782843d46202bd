/**
 * Issue 37, defect 6: what DBeaver-like tools send on connect failed: SHOW GRANTS and SHOW PLUGINS
 * (1064), information_schema.ROUTINES and KEY_COLUMN_USAGE (1146), and SHOW COLLATION LIKE
 * ignored its filter. Each is now answered with MariaDB's columns (checked against the real
 * MariaDB on 127.0.0.1:3306), empty where nothing applies; the information_schema tables and the
 * SHOW look-ups over HTTP too.
 */
import { execFile } from 'node:child_process';
import mysql from 'mysql2/promise';
import { MYSQL_ONLY_TABLES } from '../../src/mysql/session/mysqlOnlyTables';
import { querySql } from '../support/app';
import { lines, startFront, type CliResult, type Front } from './support';

/** The same `mysql` CLI against the real MariaDB (root, no password). */
const mariadbCli = (sql: string): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      'mysql',
      ['-h', '127.0.0.1', '-P', '3306', '-u', 'root', '--batch', '-e', sql],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });

/** What DBeaver's MySQL driver asks for a schema's foreign keys (a join of two of the tables, a `?`). */
const FOREIGN_KEYS = `SELECT kc.CONSTRAINT_NAME, kc.TABLE_NAME, kc.COLUMN_NAME, kc.REFERENCED_TABLE_SCHEMA,
    kc.REFERENCED_TABLE_NAME, kc.REFERENCED_COLUMN_NAME, rc.UPDATE_RULE, rc.DELETE_RULE
  FROM INFORMATION_SCHEMA.KEY_COLUMN_USAGE kc
  JOIN INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS rc
    ON rc.CONSTRAINT_SCHEMA = kc.CONSTRAINT_SCHEMA AND rc.CONSTRAINT_NAME = kc.CONSTRAINT_NAME
  WHERE kc.TABLE_SCHEMA = ? AND kc.REFERENCED_TABLE_NAME IS NOT NULL
  ORDER BY kc.TABLE_NAME, kc.ORDINAL_POSITION`;

describe('what database tools ask when they connect, answered as MariaDB does', () => {
  let front: Front;
  let door: mysql.Connection;
  let mariadb: mysql.Connection;

  /** Column names and rows of a statement, on the door and on MariaDB. */
  const onBoth = async (sql: string, params?: string[]) => {
    const ask = async (c: mysql.Connection) => {
      const [rows, fields] = params
        ? await c.execute<mysql.RowDataPacket[]>(sql, params)
        : await c.query<mysql.RowDataPacket[]>(sql);
      return { columns: fields.map((f) => f.name), rows: rows.map((r) => ({ ...r })) };
    };
    return { door: await ask(door), mariadb: await ask(mariadb) };
  };

  beforeAll(async () => {
    front = await startFront();
    door = await front.connect();
    mariadb = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
  });
  afterAll(async () => {
    await mariadb.end();
    await front.dispose();
  });

  describe('SHOW PLUGINS', () => {
    it("lists the server's authentication plugins and storage engine in MariaDB's columns", async () => {
      const both = await onBoth('SHOW PLUGINS');

      expect(both.door.columns).toEqual(both.mariadb.columns);
      expect(both.door.rows).toEqual([
        {
          Name: 'mysql_native_password',
          Status: 'ACTIVE',
          Type: 'AUTHENTICATION',
          Library: null,
          License: 'GPL',
        },
        {
          Name: 'caching_sha2_password',
          Status: 'ACTIVE',
          Type: 'AUTHENTICATION',
          Library: null,
          License: 'GPL',
        },
        { Name: 'InnoDB', Status: 'ACTIVE', Type: 'STORAGE ENGINE', Library: null, License: 'GPL' },
      ]);
      // MariaDB has the same rows for what both have.
      expect(both.mariadb.rows).toEqual(
        expect.arrayContaining(
          [both.door.rows[0], both.door.rows[2]].map((r) => expect.objectContaining(r!)),
        ),
      );
    });
  });

  describe('SHOW GRANTS', () => {
    it("answers MariaDB's one column named for the account, with no MySQL grant to list (roles decide)", async () => {
      const mariadbOwn = await onBoth('SHOW GRANTS');
      expect(mariadbOwn.mariadb.columns).toEqual(['Grants for root@127.0.0.1']);

      for (const sql of ['SHOW GRANTS', 'SHOW GRANTS FOR CURRENT_USER', 'SHOW GRANTS FOR CURRENT_USER()']) {
        const [rows, fields] = await door.query<mysql.RowDataPacket[]>(sql);
        expect(fields.map((f) => f.name)).toEqual(['Grants for analyst@%']);
        expect(rows).toEqual([]);
      }
      const [, named] = await door.query("SHOW GRANTS FOR 'reporter'@'10.0.0.%'");
      expect(named!.map((f) => f.name)).toEqual(['Grants for reporter@10.0.0.%']);
    });
  });

  describe('SHOW COLLATION and SHOW CHARACTER SET', () => {
    it("filters by LIKE: the mysql CLI prints MariaDB's very lines for utf8mb4_general_ci", async () => {
      const sql = "SHOW COLLATION LIKE 'utf8mb4_general_ci'";

      const [ours, theirs] = [await front.cli(sql), await mariadbCli(sql)];

      expect(ours).toMatchObject({ code: 0, stderr: '' });
      expect(lines(ours.stdout)).toEqual([
        ['Collation', 'Charset', 'Id', 'Default', 'Compiled', 'Sortlen'],
        ['utf8mb4_general_ci', 'utf8mb4', '45', 'Yes', 'Yes', '1'],
      ]);
      expect(ours.stdout).toBe(theirs.stdout);
    });

    it('filters by WHERE, numbers compared as numbers, with the same rows and types as MariaDB', async () => {
      const collations = await onBoth("SHOW COLLATION WHERE Charset = 'utf8mb4' AND Id < 225 AND Id > 40");
      expect(collations.door).toEqual(collations.mariadb);
      expect(collations.door.rows.map((r) => r.Collation)).toEqual([
        'utf8mb4_general_ci',
        'utf8mb4_bin',
        'utf8mb4_unicode_ci',
      ]);

      const charsets = await onBoth("SHOW CHARACTER SET LIKE 'utf8%'");
      expect(charsets.door).toEqual(charsets.mariadb);
      expect((await onBoth('SHOW CHARSET WHERE Maxlen = 4')).door.rows).toEqual([
        {
          Charset: 'utf8mb4',
          Description: 'UTF-8 Unicode',
          'Default collation': 'utf8mb4_general_ci',
          Maxlen: 4,
        },
      ]);
    });
  });

  describe('information_schema tables MindsDB does not have', () => {
    it("reads ROUTINES and KEY_COLUMN_USAGE with MariaDB's columns, empty: nothing here has routines or keys", async () => {
      for (const table of MYSQL_ONLY_TABLES) {
        const both = await onBoth(`SELECT * FROM information_schema.${table} LIMIT 0`);
        expect({ table, columns: both.door.columns }).toEqual({ table, columns: both.mariadb.columns });
      }
      const [routines] = await door.query<mysql.RowDataPacket[]>(
        "SELECT ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'mindsdb' ORDER BY ROUTINE_NAME",
      );
      expect(routines).toEqual([]);
    });

    it("answers DBeaver's foreign-key join as a prepared statement, and the tables' other spellings", async () => {
      const both = await onBoth(FOREIGN_KEYS, ['mindsdb']);
      expect(both.door).toEqual({ columns: both.mariadb.columns, rows: [] });

      // Unqualified while information_schema is in use, quoted, and a column named with its table's full name.
      await door.query('USE information_schema');
      try {
        const [bare, fields] = await door.query<mysql.RowDataPacket[]>(
          'SELECT information_schema.ROUTINES.ROUTINE_NAME, `r`.ROUTINE_TYPE FROM ROUTINES JOIN `information_schema`.`ROUTINES` AS r USING (SPECIFIC_NAME)',
        );
        expect({ rows: bare, columns: fields.map((f) => f.name) }).toEqual({
          rows: [],
          columns: ['ROUTINE_NAME', 'ROUTINE_TYPE'],
        });
      } finally {
        await door.query('USE mindsdb');
      }
    });

    it('leaves the same words alone elsewhere: in a string, and as a table of another database', async () => {
      const [text] = await door.query<mysql.RowDataPacket[]>("SELECT 'information_schema.ROUTINES' AS name");
      expect(text).toEqual([{ name: 'information_schema.ROUTINES' }]);

      await expect(door.query('SELECT * FROM mindsdb.ROUTINES')).rejects.toMatchObject({ errno: 1146 });
    });
  });

  describe('over HTTP (POST /api/sql/query)', () => {
    it('answers the information_schema tables and the SHOW look-ups as the MySQL door does', async () => {
      const routines = await querySql(
        front.app,
        "SELECT SPECIFIC_NAME, ROUTINE_SCHEMA, CREATED FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'mindsdb'",
      );
      expect(routines).toMatchObject({
        type: 'table',
        column_names: ['SPECIFIC_NAME', 'ROUTINE_SCHEMA', 'CREATED'],
        data: [],
      });
      const keys = await querySql(front.app, 'SELECT COUNT(*) AS n FROM information_schema.KEY_COLUMN_USAGE');
      expect(keys).toMatchObject({ type: 'table', column_names: ['n'], data: [[0]] });

      const collation = await querySql(front.app, "SHOW COLLATION LIKE 'utf8mb4_general_ci'");
      expect(collation).toMatchObject({
        type: 'table',
        column_names: ['Collation', 'Charset', 'Id', 'Default', 'Compiled', 'Sortlen'],
        data: [['utf8mb4_general_ci', 'utf8mb4', 45, 'Yes', 'Yes', 1]],
      });
      const plugins = await querySql(front.app, 'SHOW PLUGINS');
      expect(plugins).toMatchObject({
        type: 'table',
        column_names: ['Name', 'Status', 'Type', 'Library', 'License'],
      });
    });
  });
});
