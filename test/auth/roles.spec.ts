import type mysql from 'mysql2/promise';
import type { MysqlServer } from '../../src/mysql';
import { postgresParameters } from '../support/external';
import { type TestApp } from '../support/app';
import { ADMIN, login, mysqlAs, sqlOver, startAuthApp, startMysqlDoor, userWithRole } from './support';

type RoleName = 'admin' | 'editor' | 'analyst' | 'auditor';
const ROLES: RoleName[] = ['admin', 'editor', 'analyst', 'auditor'];

/** Each kind of route, and which roles it answers (the others: 403 problem+json). */
const ROUTES: {
  kind: string;
  request: (t: TestApp, cookie: string, role: RoleName) => Promise<{ status: number }>;
  allowed: RoleName[];
  status: number;
}[] = [
  {
    kind: 'read a resource (GET /api/projects)',
    request: (t, c) => t.http.get('/api/projects').set('Cookie', c),
    allowed: ['admin', 'editor', 'analyst'],
    status: 200,
  },
  {
    // No route answers a past state yet, so `?as_of=` must not open current resources to auditors.
    kind: 'read a resource "as of" a position (GET /api/projects?as_of=1)',
    request: (t, c) => t.http.get('/api/projects?as_of=1').set('Cookie', c),
    allowed: ['admin', 'editor', 'analyst'],
    status: 200,
  },
  {
    // An upload's progress is a read like any GET: no upload is under way here, so 404 is its answer.
    kind: 'read an upload under way (GET /api/files/{name}/upload)',
    request: (t, c) => t.http.get('/api/files/not_uploading/upload').set('Cookie', c),
    allowed: ['admin', 'editor', 'analyst'],
    status: 404,
  },
  {
    kind: 'create a resource (POST …/skills)',
    request: (t, c, role) =>
      t.http
        .post('/api/projects/mindsdb/skills')
        .set('Cookie', c)
        .send({ skill: { name: `skill_by_${role}`, type: 't', params: {} } }),
    allowed: ['admin', 'editor'],
    status: 201,
  },
  {
    kind: 'register a database (POST /api/databases)',
    request: (t, c, role) =>
      t.http
        .post('/api/databases')
        .set('Cookie', c)
        .send({ database: { name: `pg_by_${role}`, engine: 'postgres', parameters: postgresParameters() } }),
    allowed: ['admin', 'editor'],
    status: 201,
  },
  {
    kind: 'manage users (GET /api/users)',
    request: (t, c) => t.http.get('/api/users').set('Cookie', c),
    allowed: ['admin'],
    status: 200,
  },
  {
    kind: 'read the event log (GET /api/events)',
    request: (t, c) => t.http.get('/api/events?limit=5').set('Cookie', c),
    allowed: ['admin', 'editor', 'analyst', 'auditor'],
    status: 200,
  },
  {
    kind: 'run SQL (POST /api/sql/query; statements checked inside)',
    request: (t, c) => t.http.post('/api/sql/query').set('Cookie', c).send({ query: 'SELECT 1' }),
    allowed: ['admin', 'editor', 'analyst', 'auditor'],
    status: 200,
  },
  {
    kind: 'who am I, own tokens (GET /api/me, POST /api/tokens)',
    request: async (t, c, role) => {
      await t.http.get('/api/me').set('Cookie', c).expect(200);
      return t.http
        .post('/api/tokens')
        .set('Cookie', c)
        .send({ name: `own_${role}` });
    },
    allowed: ['admin', 'editor', 'analyst', 'auditor'],
    status: 201,
  },
];

/** Each kind of SQL statement, and which roles may run it (the others get an error answer). */
const STATEMENTS: { kind: string; sql: (role: RoleName) => string; allowed: RoleName[] }[] = [
  {
    kind: 'SELECT a project table',
    sql: () => 'SELECT * FROM mindsdb.models',
    allowed: ['admin', 'editor', 'analyst'],
  },
  {
    kind: 'SELECT the event log',
    sql: () => 'SELECT TYPE, ACTOR FROM information_schema.EVENTS LIMIT 3',
    allowed: ['admin', 'editor', 'analyst', 'auditor'],
  },
  { kind: 'SHOW', sql: () => 'SHOW DATABASES', allowed: ['admin', 'editor', 'analyst'] },
  { kind: 'SHOW TABLES', sql: () => 'SHOW TABLES FROM mindsdb', allowed: ['admin', 'editor', 'analyst'] },
  {
    // A read-only role reads only the registered database's own relations (issue 57).
    kind: "SELECT of the external server's catalog pushed down",
    sql: () => 'SELECT 1 AS one FROM roles_pg.pg_catalog.pg_namespace LIMIT 1',
    allowed: ['admin', 'editor'],
  },
  {
    kind: 'native query on a registered database',
    sql: () => 'SELECT * FROM roles_pg (SELECT 42 AS answer)',
    allowed: ['admin', 'editor'],
  },
  {
    kind: 'DDL (CREATE PROJECT)',
    sql: (role) => `CREATE PROJECT ddl_by_${role}_${Date.now()}`,
    allowed: ['admin', 'editor'],
  },
  {
    kind: 'CREATE SKILL',
    sql: (role) =>
      `CREATE SKILL sql_skill_${role}_${Date.now()} USING type = 'text2sql', database = 'roles_pg'`,
    allowed: ['admin', 'editor'],
  },
];

describe('each role against each kind of route and SQL statement (REST and the MySQL protocol)', () => {
  let t: TestApp;
  let mysqlServer: MysqlServer;
  const cookies = {} as Record<RoleName, string>;
  const passwords = {} as Record<RoleName, { user: string; password: string }>;
  const connections = {} as Record<RoleName, mysql.Connection>;
  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    cookies.admin = await login(t, ADMIN.name, ADMIN.password);
    passwords.admin = { user: ADMIN.name, password: ADMIN.password };
    for (const role of ROLES.filter((r) => r !== 'admin')) {
      const u = await userWithRole(t, cookies.admin, `the_${role}`, role);
      cookies[role] = u.cookie;
      passwords[role] = { user: u.name, password: u.password };
    }
    await t.http
      .post('/api/databases')
      .set('Cookie', cookies.admin)
      .send({ database: { name: 'roles_pg', engine: 'postgres', parameters: postgresParameters() } })
      .expect(201);
    mysqlServer = await startMysqlDoor(t);
    for (const role of ROLES)
      connections[role] = await mysqlAs(mysqlServer, passwords[role].user, passwords[role].password);
  });
  afterAll(async () => {
    for (const c of Object.values(connections)) c.destroy();
    await mysqlServer?.close(0);
    await t?.dispose();
  });

  describe.each(ROUTES)('REST: $kind', ({ request, allowed, status }) => {
    it.each(ROLES)('as %s', async (role) => {
      const res = (await request(t, cookies[role], role)) as {
        status: number;
        headers: Record<string, string>;
        body: { detail?: string };
      };
      if (allowed.includes(role)) expect(res.status).toBe(status);
      else {
        expect(res.status).toBe(403);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
    });
  });

  describe.each(STATEMENTS)('SQL: $kind', ({ sql, allowed }) => {
    it.each(ROLES)('over REST as %s', async (role) => {
      const answer = await sqlOver(t, cookies[role], sql(role));
      if (allowed.includes(role))
        expect(answer).toMatchObject({ type: expect.stringMatching(/^(table|ok)$/) });
      else expect(answer).toMatchObject({ type: 'error', error_code: 1227 });
    });

    it.each(ROLES)('over the MySQL protocol as %s', async (role) => {
      const run = connections[role].query(sql(role));
      if (allowed.includes(role)) await expect(run).resolves.toBeDefined();
      else await expect(run).rejects.toMatchObject({ errno: 1227 });
    });
  });

  it('says why a native query is refused to an analyst, who may still have it pushed down', async () => {
    const answer = await sqlOver(t, cookies.analyst, 'SELECT * FROM roles_pg (SELECT 42 AS answer)');
    expect(answer.error_message).toBe(
      'Native queries on roles_pg run with its stored credentials: they take the editor or admin role (yours: analyst)',
    );
    const editor = await sqlOver(t, cookies.editor, 'SELECT * FROM roles_pg (SELECT 42 AS answer)');
    expect(editor.data).toEqual([[42]]);
  });

  it('does not hand an analyst the cached answer of an editor’s native query', async () => {
    const query = 'SELECT * FROM roles_pg (SELECT 7 AS cached)';
    expect((await sqlOver(t, cookies.editor, query)).data).toEqual([[7]]);
    expect((await sqlOver(t, cookies.analyst, query)).type).toBe('error');
  });

  it('refuses MySQL logins with a wrong password, and statements of a user deleted meanwhile', async () => {
    await expect(mysqlAs(mysqlServer, 'the_analyst', 'wrong-password')).rejects.toMatchObject({
      errno: 1045,
    });
    const u = await userWithRole(t, cookies.admin, 'short_lived', 'editor');
    const c = await mysqlAs(mysqlServer, u.name, u.password);
    try {
      await expect(c.query('SELECT 1')).resolves.toBeDefined();
      await t.http.delete('/api/users/short_lived').set('Cookie', cookies.admin).expect(204);
      await expect(c.query('SELECT 1')).rejects.toMatchObject({ errno: 1045 });
    } finally {
      c.destroy();
    }
  });

  it('does not let an old password in over MySQL after a change (the fast path is per credential)', async () => {
    const u = await userWithRole(t, cookies.admin, 'rotating', 'analyst');
    (await mysqlAs(mysqlServer, u.name, u.password)).destroy();
    await t.http
      .put('/api/users/rotating')
      .set('Cookie', cookies.admin)
      .send({ password: 'rotated-password' })
      .expect(200);
    await expect(mysqlAs(mysqlServer, u.name, u.password)).rejects.toMatchObject({ errno: 1045 });
    (await mysqlAs(mysqlServer, u.name, 'rotated-password')).destroy();
  });
});
