/**
 * Column labels, alike on every door. `SELECT name, status FROM mindsdb.models` came back as `NAME`,
 * `STATUS` (DuckDB labels a column by the table's own name), so node-postgres' `row.name` and
 * mysql2's were undefined. As MySQL labels them: an alias as written; a column as written in the
 * query; any other expression with its text as written (`COUNT(*)`, not DuckDB's `count_star()`);
 * `SELECT *` with the source's own names (MindsDB's system tables name theirs in upper case). The
 * official SDK lower-cases every label it reads, so it reads either.
 */
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { querySql } from '../support/app';
import { startPgFront, type PgFront } from '../pgwire/support';
import { startMysqlServer, type MysqlServer } from '../../src/mysql/server';
import pino from 'pino';
import mysqlDriver from 'mysql2/promise';
import { appEngine } from '../mysql/support';

const CASES: [query: string, labels: string[]][] = [
  ['SELECT name, status FROM mindsdb.models', ['name', 'status']],
  ['SELECT Name AS n, m.STATUS FROM mindsdb.models AS m', ['n', 'STATUS']],
  ['SELECT COUNT(*) FROM mindsdb.models', ['COUNT(*)']],
  ['select count(*), max(name) top FROM mindsdb.models', ['count(*)', 'top']],
  ["SELECT 'abc', 1 + 2, NULL", ['abc', '1 + 2', 'NULL']],
  ['WITH x AS (SELECT 1 AS q) SELECT q FROM x', ['q']],
];

describe('column labels on HTTP, MySQL and PostgreSQL', () => {
  let front: PgFront;
  let mysqlDoor: MysqlServer;
  let my: mysql.Connection;
  let client: pg.Client;

  beforeAll(async () => {
    front = await startPgFront();
    mysqlDoor = await startMysqlServer({
      engine: appEngine(front.app),
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
    });
    my = await mysqlDriver.createConnection({ host: '127.0.0.1', port: mysqlDoor.port, user: 'analyst' });
    client = await front.connect();
  });
  afterAll(async () => {
    await my?.end();
    await mysqlDoor?.close(0);
    await front?.dispose();
  });

  it.each(CASES)('given %s, then every door labels it %j', async (query, labels) => {
    const http = await querySql(front.app, query);
    expect(http.column_names).toEqual(labels);
    const [, fields] = await my.query(query);
    expect((fields as { name: string }[]).map((f) => f.name)).toEqual(labels);
    const simple = await client.query(query);
    expect(simple.fields.map((f) => f.name)).toEqual(labels);
    // Extended protocol: the labels come from Describe, before anything runs.
    const extended = await client.query({
      text: query,
      values: [],
      name: `q${labels.join('_').length}${query.length}`,
    });
    expect(extended.fields.map((f) => f.name)).toEqual(labels);
  });

  it("given SELECT * of a system table, then the table's own (upper-case) names", async () => {
    const http = await querySql(front.app, 'SELECT * FROM information_schema.models');
    expect(http.column_names).toContain('NAME');
    expect(http.column_names).toContain('STATUS');
  });

  it('given a column read through the drivers, then row.name is its value', async () => {
    await querySql(front.app, 'CREATE PROJECT labels_p');
    const q = "SELECT name FROM information_schema.databases WHERE name = 'labels_p'";
    const [rows] = await my.query(q);
    expect((rows as { name: string }[])[0]?.name).toBe('labels_p');
    expect((await client.query(q)).rows[0]?.name).toBe('labels_p');
  });
});
