/**
 * Issue 57, defect 4: a read-only caller's pushed-down query (and an external table fetched for a
 * mixed query) names only relations of the database, and schema, its external database was
 * registered with. `extpg.pg_catalog.pg_authid` (password hashes), a bare `extpg.pg_shadow`
 * (PostgreSQL reads a bare pg_ name in pg_catalog first), `extpg.pg_stat_activity` (other
 * sessions' SQL), `extmy.mysql.user`, `extmy.information_schema.processlist` and another database
 * on the same MariaDB server were all read by an analyst, over every door. The admin, who owns
 * the integration, and the editor, who runs native queries on it anyway, still read them.
 *
 * Against the old code (src/sql/roles.ts `withRegisteredRelations` not applied) every refusal
 * below answers the rows instead, and the matrix fails on its first relation.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import type { MysqlServer } from '../../src/mysql';
import type { PgServer } from '../../src/pgwire';
import type { TestApp } from '../support/app';
import { freshMariaData, freshPostgresData } from '../support/external';
import {
  ADMIN,
  login,
  mysqlAs,
  projectToken,
  sqlOver,
  startAuthApp,
  startMysqlDoor,
  userWithRole,
} from '../auth/support';
import { pgClient, startPgDoor } from '../pgwire/support';
import { bearer, call, listen, mcpClient, type Listening } from '../mcp/support';

type Role = 'admin' | 'editor' | 'analyst' | 'auditor';
const ROLES: readonly Role[] = ['admin', 'editor', 'analyst', 'auditor'];
type Door = 'http' | 'mysql' | 'postgres' | 'mcp';
const DOORS: readonly Door[] = ['http', 'mysql', 'postgres', 'mcp'];
type Answer = { rows?: unknown[][]; error?: string };

describe('issue 57: what a read-only role reads on a registered database is its registered relations only', () => {
  let t: TestApp;
  let pgData: Awaited<ReturnType<typeof freshPostgresData>>;
  let maria: Awaited<ReturnType<typeof freshMariaData>>;
  let other: Awaited<ReturnType<typeof freshMariaData>>;
  let mysqlServer: MysqlServer;
  let pgServer: PgServer;
  let listening: Listening;
  const cookies = {} as Record<Role, string>;
  const mysqlConnections = {} as Record<Role, mysql.Connection>;
  const pgConnections = {} as Record<Role, pg.Client>;
  const mcpClients = {} as Record<Role, Client>;
  const pgOpened: pg.Client[] = [];

  /** One statement as `role` over `door`: its rows, or its refusal's message (error 1227 on each). */
  const run = async (role: Role, door: Door, sql: string): Promise<Answer> => {
    switch (door) {
      case 'http': {
        const answer = await sqlOver(t, cookies[role], sql);
        if (answer.type !== 'error') return { rows: answer.data };
        expect(answer.error_code).toBe(1227);
        return { error: answer.error_message };
      }
      case 'mysql':
        try {
          const [rows] = await mysqlConnections[role].query({ sql, rowsAsArray: true });
          return { rows: rows as unknown[][] };
        } catch (error) {
          expect(error).toMatchObject({ errno: 1227 });
          return { error: (error as Error).message };
        }
      case 'postgres':
        try {
          return {
            rows: (await pgConnections[role].query({ text: sql, rowMode: 'array' })).rows as unknown[][],
          };
        } catch (error) {
          expect(error).toMatchObject({ code: '42501' });
          return { error: (error as Error).message };
        }
      case 'mcp': {
        const s = (await call(mcpClients[role], 'query', { query: sql })).structuredContent;
        if (s?.type !== 'error') return { rows: s?.data };
        expect(s.error_code).toBe(1227);
        return { error: s.error_message };
      }
    }
  };

  beforeAll(async () => {
    pgData = await freshPostgresData([
      'CREATE TABLE t (id int, name text)',
      "INSERT INTO t VALUES (1, 'ada'), (2, 'bob')",
    ]);
    maria = await freshMariaData([
      'CREATE TABLE n (id int, name varchar(20))',
      "INSERT INTO n VALUES (1, 'ada'), (2, 'bob')",
    ]);
    other = await freshMariaData([
      'CREATE TABLE secret (v varchar(20))',
      "INSERT INTO secret VALUES ('not yours')",
    ]);
    t = await startAuthApp('sqlite');
    cookies.admin = await login(t, ADMIN.name, ADMIN.password);
    const users = { admin: ADMIN } as Record<Role, { name: string; password: string }>;
    for (const role of ['editor', 'analyst', 'auditor'] as const) {
      const u = await userWithRole(t, cookies.admin, `relations_${role}`, role);
      cookies[role] = u.cookie;
      users[role] = u;
    }
    for (const [name, engine, parameters] of [
      ['extpg', 'postgres', pgData.parameters],
      ['extmy', 'mariadb', maria.parameters],
    ] as const)
      await t.http
        .post('/api/databases')
        .set('Cookie', cookies.admin)
        .send({ database: { name, engine, parameters } })
        .expect(201);
    mysqlServer = await startMysqlDoor(t);
    pgServer = await startPgDoor(t, { authOn: true, server: { host: '127.0.0.1' } });
    listening = await listen(t);
    for (const role of ROLES) {
      mysqlConnections[role] = await mysqlAs(mysqlServer, users[role].name, users[role].password);
      pgConnections[role] = await pgClient(
        pgServer.port,
        { user: users[role].name, password: users[role].password },
        pgOpened,
      );
      const token = await projectToken(t, await login(t, users[role].name, users[role].password), null);
      mcpClients[role] = await mcpClient(listening.url, bearer(token));
    }
  });
  afterAll(async () => {
    for (const c of Object.values(mysqlConnections)) c.destroy();
    await Promise.all(pgOpened.map((c) => c.end().catch(() => undefined)));
    await Promise.all(Object.values(mcpClients).map((c) => c.close().catch(() => undefined)));
    await listening?.close();
    await mysqlServer?.close(0);
    await pgServer?.close(0);
    await t?.dispose();
    await pgData?.drop();
    await maria?.drop();
    await other?.drop();
  });

  const pgRefusal = (relation: string, why = '') =>
    `analyst role: ${relation} is not read on extpg: ${why}only relations of its registered database ${pgData.name}, schema public, may be read`;
  const myRefusal = (relation: string, why = '') =>
    `analyst role: ${relation} is not read on extmy: ${why}only relations of its registered database ${maria.name} may be read`;
  const BARE_PG = 'PostgreSQL reads a bare pg_ name in its own catalog pg_catalog first; ';
  const CATALOG = (schema: string) => `${schema} is the server's own catalog; `;

  /**
   * Each relation outside the registered database, as a query reads it (plain, in a subquery, a
   * CTE, a join, a mixed query whose external table is fetched), and the analyst's refusal.
   */
  const OUTSIDE = (): { id: string; sql: string; refusal: string }[] => [
    {
      id: 'pg_catalog.pg_authid (password hashes)',
      sql: 'SELECT rolname, rolpassword FROM extpg.pg_catalog.pg_authid',
      refusal: pgRefusal('pg_catalog.pg_authid', CATALOG('pg_catalog')),
    },
    {
      id: 'a bare pg_shadow (read in pg_catalog by the search path)',
      sql: 'SELECT usename, passwd FROM extpg.pg_shadow',
      refusal: pgRefusal('pg_shadow', BARE_PG),
    },
    {
      id: 'a bare pg_stat_activity (other sessions’ SQL)',
      sql: 'SELECT query FROM extpg.pg_stat_activity',
      refusal: pgRefusal('pg_stat_activity', BARE_PG),
    },
    {
      id: 'pg_catalog.pg_authid in a subquery',
      sql: 'SELECT id FROM extpg.t WHERE name NOT IN (SELECT rolname FROM extpg.pg_catalog.pg_authid)',
      refusal: pgRefusal('pg_catalog.pg_authid', CATALOG('pg_catalog')),
    },
    {
      id: 'a bare pg_authid in a CTE',
      sql: 'WITH a AS (SELECT rolname FROM extpg.pg_authid) SELECT count(*) FROM a',
      refusal: pgRefusal('pg_authid', BARE_PG),
    },
    {
      id: 'pg_catalog.pg_roles in a join',
      sql: 'SELECT t.id, r.rolname FROM extpg.t JOIN extpg.pg_catalog.pg_roles r ON true',
      refusal: pgRefusal('pg_catalog.pg_roles', CATALOG('pg_catalog')),
    },
    {
      id: 'information_schema on PostgreSQL',
      sql: 'SELECT table_name FROM extpg.information_schema.tables',
      refusal: pgRefusal('information_schema.tables', CATALOG('information_schema')),
    },
    {
      id: 'pg_catalog.pg_authid fetched for a mixed query',
      sql: 'SELECT a.rolname FROM extpg.pg_catalog.pg_authid a, information_schema.DATABASES d',
      refusal: pgRefusal('pg_catalog.pg_authid', CATALOG('pg_catalog')),
    },
    {
      id: 'mysql.user',
      sql: 'SELECT Host FROM extmy.mysql.user',
      refusal: myRefusal('mysql.user', CATALOG('mysql')),
    },
    {
      id: 'information_schema.processlist on MariaDB',
      sql: 'SELECT info FROM extmy.information_schema.processlist',
      refusal: myRefusal('information_schema.processlist', CATALOG('information_schema')),
    },
    {
      id: 'another database on the same MariaDB server',
      sql: `SELECT v FROM extmy.${other.name}.secret`,
      refusal: myRefusal(`${other.name}.secret`),
    },
    {
      id: 'another database, fetched for a mixed query',
      sql: `SELECT s.v FROM extmy.${other.name}.secret s, information_schema.DATABASES d`,
      refusal: myRefusal(`${other.name}.secret`),
    },
  ];

  /** Relations of the registered database: every role that reads external databases reads them. */
  const INSIDE = (): { sql: string; rows: unknown[][] }[] => [
    { sql: 'SELECT name FROM extpg.t ORDER BY id', rows: [['ada'], ['bob']] },
    { sql: 'SELECT name FROM extpg.public.t ORDER BY id', rows: [['ada'], ['bob']] },
    { sql: 'SELECT name FROM extmy.n ORDER BY id', rows: [['ada'], ['bob']] },
    { sql: `SELECT name FROM extmy.${maria.name}.n ORDER BY id`, rows: [['ada'], ['bob']] },
    {
      sql: 'WITH x AS (SELECT name FROM extpg.t) SELECT name FROM x WHERE name IN (SELECT name FROM extpg.t) ORDER BY 1',
      rows: [['ada'], ['bob']],
    },
    { sql: 'SELECT t.name FROM extpg.t, information_schema.DATABASES d LIMIT 1', rows: [['ada']] },
  ];

  describe.each(DOORS)('over %s', (door) => {
    it('refuses the analyst every relation outside the registered database, naming it', async () => {
      for (const { id, sql, refusal } of OUTSIDE()) {
        const answer = await run('analyst', door, sql);
        expect({ id, ...answer }).toEqual({ id, error: refusal });
      }
    });

    it('refuses the auditor the same relations (it reads information_schema.EVENTS only)', async () => {
      for (const { sql } of OUTSIDE()) {
        const answer = await run('auditor', door, sql);
        expect(answer.error).toMatch(/^The auditor role reads information_schema\.EVENTS only, not /);
      }
    });

    it('answers the analyst the relations of the registered database, however qualified', async () => {
      for (const { sql, rows } of INSIDE()) {
        const answer = await run('analyst', door, sql);
        expect({ sql, ...answer }).toEqual({ sql, rows });
      }
    });

    it.each(['admin', 'editor'] as const)(
      'lets the %s read the server’s catalogs and its other databases (its integration, its native queries)',
      async (role) => {
        for (const { id, sql } of OUTSIDE()) {
          const answer = await run(role, door, sql);
          expect({ id, error: answer.error }).toEqual({ id, error: undefined });
        }
        expect(
          (await run(role, door, "SELECT rolname FROM extpg.pg_authid WHERE rolname = 'postgres'")).rows,
        ).toEqual([['postgres']]);
        expect((await run(role, door, `SELECT v FROM extmy.${other.name}.secret`)).rows).toEqual([
          ['not yours'],
        ]);
      },
    );
  });

  it('refuses the analyst unqualified PostgreSQL table functions before anything is sent (the function rules)', async () => {
    expect((await run('analyst', 'http', "SELECT * FROM extpg.t, pg_ls_dir('.') AS f")).error).toBe(
      'Table function pg_ls_dir() is not allowed',
    );
    expect(
      (await run('analyst', 'http', "SELECT * FROM extpg.t, dblink('dbname=postgres', 'SELECT 1') AS d"))
        .error,
    ).toBe('Table function dblink() is not allowed');
    expect(
      (await run('analyst', 'http', "SELECT id FROM extpg.t WHERE pg_read_file('/etc/hostname') IS NOT NULL"))
        .error,
    ).toMatch(/^analyst role: function pg_read_file\(\) is not pushed down to extpg /);
  });

  it('refuses the analyst a pg_ name quoted or in capitals, and the registered schema spelled otherwise', async () => {
    expect((await run('analyst', 'http', 'SELECT * FROM extpg.`PG_AUTHID`')).error).toBe(
      pgRefusal('PG_AUTHID', BARE_PG),
    );
    expect((await run('analyst', 'http', 'SELECT * FROM extpg.PG_CATALOG.pg_authid')).error).toBe(
      pgRefusal('PG_CATALOG.pg_authid', CATALOG('PG_CATALOG')),
    );
    expect((await run('analyst', 'http', 'SELECT * FROM extpg.pg_toast.x')).error).toBe(
      pgRefusal('pg_toast.x', CATALOG('pg_toast')),
    );
    expect((await run('analyst', 'http', 'SELECT * FROM extmy.performance_schema.threads')).error).toBe(
      myRefusal('performance_schema.threads', CATALOG('performance_schema')),
    );
    expect((await run('analyst', 'http', 'SELECT * FROM extmy.sys.version')).error).toBe(
      myRefusal('sys.version', CATALOG('sys')),
    );
  });

  it('refuses a USE-d external database’s bare pg_ name as its qualified one', async () => {
    await mysqlConnections.analyst.query('USE extpg');
    try {
      await expect(mysqlConnections.analyst.query('SELECT passwd FROM pg_shadow')).rejects.toMatchObject({
        errno: 1227,
        message: pgRefusal('pg_shadow', BARE_PG),
      });
      const [rows] = await mysqlConnections.analyst.query({
        sql: 'SELECT name FROM t ORDER BY id',
        rowsAsArray: true,
      });
      expect(rows).toEqual([['ada'], ['bob']]);
    } finally {
      await mysqlConnections.analyst.query('USE mindsdb');
    }
  });
});
