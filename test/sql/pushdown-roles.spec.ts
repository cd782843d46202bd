/**
 * What a read-only role pushes down is read-only on the remote side too (issue 36): an analyst's
 * query of one external database calls only the functions of src/sql/pushdownAllowList.ts, and
 * runs there in a read-only transaction under a time limit; editors and admins push down all.
 */
import fs from 'node:fs';
import type mysql from 'mysql2/promise';
import pg from 'pg';
import type { MysqlServer } from '../../src/mysql';
import type { PgServer } from '../../src/pgwire';
import { connect, withExecutionTimeHint, type ExternalDatabase } from '../../src/integrations/drivers';
import { checkReadOnlyPushdown } from '../../src/sql/faces/integration/pushdownAllowList';
import type { TestApp } from '../support/app';
import { freshMariaData, freshPostgresData } from '../support/external';
import { ADMIN, login, mysqlAs, sqlOver, startAuthApp, startMysqlDoor, userWithRole } from '../auth/support';
import { pgClient, startPgDoor } from '../pgwire/support';

const refusalOf = (role: string, what: string, integration: string) =>
  `${role} role: ${what} is not pushed down to ${integration} (a read-only role pushes down only ordinary scalar and aggregate functions: arithmetic, string, date/time, casts, count/sum/avg/min/max, coalesce, …; the editor and admin roles push down everything)`;

describe('the allow-list of what a read-only role pushes down (the text as the remote reads it)', () => {
  const check = (engine: string, text: string) => () => checkReadOnlyPushdown(text, engine, 'ext', 'analyst');
  it.each([
    ['postgres', 'SELECT upper(name), count(*) FROM t GROUP BY 1'],
    ['postgres', 'SELECT CAST(n AS varchar(10)), coalesce(x, 0) FROM t WHERE n IN (1, 2)'],
    ['postgres', 'WITH c(a) AS (SELECT 1) SELECT a, row_number() OVER (ORDER BY a) FROM c'],
    ['postgres', 'SELECT t.user FROM t'],
    ['mysql', 'SELECT date_format(d, ?), ifnull(x, 0), count(DISTINCT n) FROM `t` WHERE n = ?'],
  ])('pushes down %s: %s', (engine, text) => expect(check(engine, text)).not.toThrow());

  it.each([
    ['postgres', "SELECT pg_read_file('/etc/hostname') FROM t", 'function pg_read_file()'],
    ['postgres', 'SELECT "pg_read_file"(\'/etc/hostname\') FROM t', 'function "pg_read_file"()'],
    ['postgres', "SELECT pg_catalog.upper('a') FROM t", 'schema-qualified function upper()'],
    ['postgres', 'SELECT current_user FROM t', 'function current_user'],
    ['postgres', 'SELECT user FROM t', 'function user'],
    ['postgres', "SELECT E'a\\'' , pg_read_file('x'), '' FROM t", 'a string with a backslash'],
    ['postgres', "SELECT $a$ ' $a$, pg_read_file('x') FROM t", '$ quoting'],
    ['mysql', "SELECT 1 --LOAD_FILE('/etc/hostname')\n FROM t", 'a comment'],
    ['mysql', "SELECT /*! LOAD_FILE('/etc/hostname') */ 1 FROM t", 'a comment'],
    ['mysql', 'SELECT @@datadir FROM t', 'system variable @@datadir'],
    ['mysql', "SELECT 1 FROM t INTO OUTFILE '/tmp/x'", 'INTO'],
    ['mysql', 'SELECT sleep(1) FROM t', 'function sleep()'],
  ])('refuses %s: %s', (engine, text, what) =>
    expect(check(engine, text)).toThrow(refusalOf('analyst', what, 'ext')),
  );
});

describe("MySQL's time limit (no MySQL server here: the text it is sent)", () => {
  it('goes after the top-level SELECT: the first, or the first outside parentheses past a WITH clause', () => {
    expect(withExecutionTimeHint('/* c */ SELECT a FROM t', 900)).toBe(
      '/* c */ SELECT /*+ MAX_EXECUTION_TIME(900) */ a FROM t',
    );
    // A query pushed down whole is sent as written (no `SELECT * FROM (…)` around it): a WITH query
    // keeps its hint, on the query after its CTEs, not inside one.
    expect(
      withExecutionTimeHint('WITH c AS (SELECT 1 AS x), d AS (SELECT x FROM c) SELECT x FROM d', 900),
    ).toBe(
      'WITH c AS (SELECT 1 AS x), d AS (SELECT x FROM c) SELECT /*+ MAX_EXECUTION_TIME(900) */ x FROM d',
    );
    // With no top-level SELECT the text goes unhinted (the call's own limit still ends it here).
    expect(withExecutionTimeHint('(SELECT 1) UNION (SELECT 2)', 900)).toBe('(SELECT 1) UNION (SELECT 2)');
  });
});

describe('a read-only statement on the remote side (the drivers’ readOnlyQuery)', () => {
  let data: Awaited<ReturnType<typeof freshPostgresData>>;
  let maria: Awaited<ReturnType<typeof freshMariaData>>;
  let pgDb: ExternalDatabase;
  let myDb: ExternalDatabase;
  beforeAll(async () => {
    data = await freshPostgresData(['CREATE TABLE t (name text)']);
    maria = await freshMariaData(['CREATE TABLE n (name varchar(20))']);
    const options = { connectTimeoutMs: 5000, queryTimeoutMs: 30_000 };
    pgDb = connect('postgres', data.parameters, options);
    myDb = connect('mariadb', maria.parameters, options);
  });
  afterAll(async () => {
    await pgDb?.close();
    await myDb?.close();
    await data?.drop();
    await maria?.drop();
  });

  it('PostgreSQL: runs in a read-only transaction (lo_import cannot write) with statement_timeout', async () => {
    expect(
      (await pgDb.readOnlyQuery("SELECT current_setting('transaction_read_only')", [], { timeoutMs: 5000 }))
        .rows,
    ).toEqual([['on']]);
    // The server's limit a tenth inside the call's own, so its error (naming the limit) comes first.
    expect(
      (await pgDb.readOnlyQuery("SELECT current_setting('statement_timeout')", [], { timeoutMs: 1234 })).rows,
    ).toEqual([['1110ms']]);
    const objects = async () => (await pgDb.query('SELECT count(*) FROM pg_largeobject_metadata')).rows;
    const before = await objects();
    // PostgreSQL 16 refuses it ("cannot execute lo_import() in a read-only transaction"); 15 lets
    // it make the object, which the rollback that ends every such statement takes back.
    await pgDb.readOnlyQuery("SELECT lo_import('/etc/hostname')", [], { timeoutMs: 5000 }).then(
      () => undefined,
      (error: Error) => expect(error.message).toBe('cannot execute lo_import() in a read-only transaction'),
    );
    await expect(pgDb.readOnlyQuery("INSERT INTO t VALUES ('x')", [], { timeoutMs: 5000 })).rejects.toThrow(
      'read-only transaction',
    );
    // 2 s, not less: the server's limit is a tenth inside the call's own, and on a loaded machine
    // 20 ms (of a 200 ms call) was too little for the server's error to come before the call's timer.
    await expect(pgDb.readOnlyQuery('SELECT pg_sleep(5)', [], { timeoutMs: 2000 })).rejects.toThrow(
      /statement timeout/,
    );
    expect(await objects()).toEqual(before);
    // The pooled connections are left as they were: read-write, the pool's own time limit.
    expect((await pgDb.query("SELECT current_setting('transaction_read_only')")).rows).toEqual([['off']]);
  });

  it('MariaDB: runs in a read-only transaction with max_statement_time', async () => {
    await expect(myDb.readOnlyQuery("INSERT INTO n VALUES ('x')", [], { timeoutMs: 5000 })).rejects.toThrow(
      /READ ONLY transaction/i,
    );
    // 2 s, as PostgreSQL's above: the server's limit (a tenth inside) must come first under load.
    // The server's limit ended it (its error, not the call's own timer nor SLEEP's end).
    await expect(myDb.readOnlyQuery('SELECT SLEEP(5) AS s', [], { timeoutMs: 2000 })).rejects.toThrow(
      /max_statement_time/,
    );
    expect((await myDb.query('SELECT count(*) FROM n')).rows).toEqual([[0]]);
  });
});

type Role = 'admin' | 'editor' | 'analyst';
type Door = 'http' | 'mysql' | 'postgres';

describe('each role pushing the probes of issue 36 down, over each door', () => {
  let t: TestApp;
  let pgData: Awaited<ReturnType<typeof freshPostgresData>>;
  let maria: Awaited<ReturnType<typeof freshMariaData>>;
  let mysqlServer: MysqlServer;
  let pgServer: PgServer;
  let remote: pg.Client;
  const cookies = {} as Record<Role, string>;
  const mysqlConnections = {} as Record<Role, mysql.Connection>;
  const pgConnections = {} as Record<Role, pg.Client>;
  const pgOpened: pg.Client[] = [];

  /** What one statement answers over one door: its rows, or its error message. */
  const run = async (
    role: Role,
    door: Door,
    sql: string,
  ): Promise<{ rows?: unknown[][]; error?: string }> => {
    if (door === 'http') {
      const answer = await sqlOver(t, cookies[role], sql);
      if (answer.type === 'error') {
        expect(answer.error_code).toBe(1227);
        return { error: answer.error_message };
      }
      return { rows: answer.data };
    }
    if (door === 'mysql') {
      try {
        const [rows] = await mysqlConnections[role].query({ sql, rowsAsArray: true });
        return { rows: rows as unknown[][] };
      } catch (error) {
        expect(error).toMatchObject({ errno: 1227 });
        return { error: (error as Error).message };
      }
    }
    try {
      return { rows: (await pgConnections[role].query({ text: sql, rowMode: 'array' })).rows as unknown[][] };
    } catch (error) {
      expect(error).toMatchObject({ code: '42501' });
      return { error: (error as Error).message };
    }
  };
  const largeObjects = async () =>
    Number((await remote.query('SELECT count(*) AS n FROM pg_largeobject_metadata')).rows[0].n);

  beforeAll(async () => {
    pgData = await freshPostgresData([
      'CREATE TABLE t (id int, name text)',
      "INSERT INTO t VALUES (1, 'ada'), (2, 'ada'), (3, 'bob')",
    ]);
    maria = await freshMariaData([
      'CREATE TABLE n (id int, name varchar(20))',
      "INSERT INTO n VALUES (1, 'ada'), (2, 'bob')",
    ]);
    remote = new pg.Client({ ...pgData.parameters });
    await remote.connect();
    t = await startAuthApp('sqlite');
    cookies.admin = await login(t, ADMIN.name, ADMIN.password);
    const users = { admin: { name: ADMIN.name, password: ADMIN.password } } as Record<
      Role,
      { name: string; password: string }
    >;
    for (const role of ['editor', 'analyst'] as const) {
      const u = await userWithRole(t, cookies.admin, `pushing_${role}`, role);
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
    for (const role of ['admin', 'editor', 'analyst'] as const) {
      mysqlConnections[role] = await mysqlAs(mysqlServer, users[role].name, users[role].password);
      pgConnections[role] = await pgClient(
        pgServer.port,
        { user: users[role].name, password: users[role].password },
        pgOpened,
      );
    }
  });
  afterAll(async () => {
    for (const c of Object.values(mysqlConnections)) c.destroy();
    await Promise.all(pgOpened.map((c) => c.end().catch(() => undefined)));
    await mysqlServer?.close(0);
    await pgServer?.close(0);
    await remote?.end();
    await t?.dispose();
    await pgData?.drop();
    await maria?.drop();
  });

  const PROBES: { sql: string; what: string; integration: string }[] = [
    {
      sql: "SELECT pg_read_file('/etc/hostname') AS f, current_user AS u FROM extpg.t LIMIT 1",
      what: 'function pg_read_file()',
      integration: 'extpg',
    },
    {
      sql: "SELECT lo_import('/etc/hostname') AS f FROM extpg.t LIMIT 1",
      what: 'function lo_import()',
      integration: 'extpg',
    },
    {
      sql: "SELECT set_config('log_statement','all',false) AS f FROM extpg.t LIMIT 1",
      what: 'function set_config()',
      integration: 'extpg',
    },
    {
      sql: 'SELECT pg_sleep(1) AS f FROM extpg.t LIMIT 1',
      what: 'function pg_sleep()',
      integration: 'extpg',
    },
    {
      sql: 'SELECT pg_terminate_backend(0) AS f FROM extpg.t LIMIT 1',
      what: 'function pg_terminate_backend()',
      integration: 'extpg',
    },
    {
      sql: "SELECT f FROM extpg.t CROSS JOIN LATERAL (SELECT pg_ls_dir('.') AS f) AS d LIMIT 1",
      what: 'function pg_ls_dir()',
      integration: 'extpg',
    },
    {
      sql: "SELECT LOAD_FILE('/etc/hostname') AS f, @@datadir AS d FROM extmy.n LIMIT 1",
      what: 'function LOAD_FILE()',
      integration: 'extmy',
    },
  ];

  describe.each(['http', 'mysql', 'postgres'] as const)('over %s', (door) => {
    it.each(PROBES)('refuses the analyst $what, naming it', async ({ sql, what, integration }) => {
      const before = await largeObjects();
      const answer = await run('analyst', door, sql);
      expect(answer.error).toBe(refusalOf('analyst', what, integration));
      expect(await largeObjects()).toBe(before);
    });

    it('still answers the analyst an ordinary pushed-down query', async () => {
      const texts = (rows: unknown[][] | undefined) => rows?.map((r) => r.map(String));
      expect(
        texts(
          (await run('analyst', door, 'SELECT upper(name), count(*) FROM extpg.t GROUP BY 1 ORDER BY 1'))
            .rows,
        ),
      ).toEqual([
        ['ADA', '2'],
        ['BOB', '1'],
      ]);
      expect((await run('analyst', door, 'SELECT upper(name) AS u FROM extmy.n ORDER BY id')).rows).toEqual([
        ['ADA'],
        ['BOB'],
      ]);
    });

    it.each(['admin', 'editor'] as const)('keeps full pushdown for the %s', async (role) => {
      const hostname = fs.readFileSync('/etc/hostname', 'utf8');
      const read = await run(role, door, "SELECT pg_read_file('/etc/hostname') AS f FROM extpg.t LIMIT 1");
      expect(read.rows).toEqual([[hostname]]);
      // (The PostgreSQL door answers current_user itself: the signed-in user.)
      if (door !== 'postgres')
        expect((await run(role, door, 'SELECT current_user AS u FROM extpg.t LIMIT 1')).rows).toEqual([
          ['postgres'],
        ]);
      const file = await run(role, door, "SELECT LOAD_FILE('/etc/hostname') AS f FROM extmy.n LIMIT 1");
      expect(file.error).toBeUndefined();
      expect(file.rows).toHaveLength(1);
    });
  });

  it('refuses the analyst a system variable sent to MariaDB (over HTTP: the MySQL door answers @@ itself)', async () => {
    const answer = await run('analyst', 'http', 'SELECT @@datadir AS d FROM extmy.n LIMIT 1');
    expect(answer.error).toBe(refusalOf('analyst', 'system variable @@datadir', 'extmy'));
  });

  it('lets the editor write a large object through pushdown, as before (the rule is the role’s)', async () => {
    const before = await largeObjects();
    const answer = await run('editor', 'http', "SELECT lo_import('/etc/hostname') AS f FROM extpg.t LIMIT 1");
    expect(answer.rows).toHaveLength(1);
    expect(await largeObjects()).toBe(before + 1);
  });
});
