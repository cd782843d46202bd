/**
 * The role matrix, generated (issue 36's "done when"): every principal (admin, editor, analyst,
 * auditor, a token scoped to project `pa`) reaches every door (REST, SQL over HTTP, the MySQL
 * protocol, the PostgreSQL protocol) with every kind of operation (reads of a project's tables and
 * of the catalogs, pushed-down SELECTs calling ordinary and dangerous functions, native queries,
 * writes, cross-project reads and writes, user management), and each answer is what docs/security.md's "Sign-in
 * and roles" promises:
 *
 * - allowed: an answer, with rows when it reads; a catalog read (information_schema, SHOW,
 *   DESCRIBE) answers only rows of the projects the principal reaches (all of them, or its token's);
 * - refused: the door's refusal (REST 403 problem+json; SQL error 1227 over HTTP and MySQL,
 *   SQLSTATE 42501 over PostgreSQL), with the log's head where it stood: nothing half-applied;
 * - every door takes every principal's credential: a token signs in on the wire doors as its
 *   user's password (issue 57), its role and project scope applied there as over HTTP; a sign-in
 *   refused (MySQL 1045, PostgreSQL 28P01) would be a disagreement.
 *
 * What is expected is `expected` below: a few lines restating docs/security.md's rules, never the
 * product's own code. fast-check draws sequences of (principal, door, operation) with a fresh seed each run;
 * one world per store answers all of them, each principal signed in once per door.
 * Beside it, a kill check: a token signed in with its user's whole reach (its project scope dropped,
 * on every door) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import type mysql from 'mysql2/promise';
import pg from 'pg';
import type { MysqlServer } from '../../src/mysql';
import type { PgServer } from '../../src/pgwire';
import { storeKinds, type StoreKind, type TestApp } from '../support/app';
import { freshPostgresData } from '../support/external';
import { pgClient, startPgDoor } from '../pgwire/support';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { listen, mcpClient, type Listening } from '../mcp/support';
import {
  ADMIN,
  login,
  mysqlAs,
  projectToken,
  sqlOver,
  startAuthApp,
  startMysqlDoor,
  userWithRole,
} from './support';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

/** Fixed, so a failure reproduces (ROLE_MATRIX_SEED and ROLE_MATRIX_RUNS explore further). */
const SEED = Number(process.env.ROLE_MATRIX_SEED ?? propertySeed());
const RUNS = Number(process.env.ROLE_MATRIX_RUNS ?? 25);

// ---------------------------------------------------------------------------------------------
// The vocabulary: principals, doors, operations.

type Role = 'admin' | 'editor' | 'analyst' | 'auditor';
type Principal = {
  name: 'admin' | 'editor' | 'analyst' | 'auditor' | 'token(pa)';
  role: Role;
  /** The project a token is scoped to; null: the user's own reach. */
  project: string | null;
  /** What it signs in with: a user's password, or a bearer token. */
  credential: 'password' | 'token';
};
const PRINCIPALS: Principal[] = [
  { name: 'admin', role: 'admin', project: null, credential: 'password' },
  { name: 'editor', role: 'editor', project: null, credential: 'password' },
  { name: 'analyst', role: 'analyst', project: null, credential: 'password' },
  { name: 'auditor', role: 'auditor', project: null, credential: 'password' },
  // Made by the admin: the admin's role, held to one project.
  { name: 'token(pa)', role: 'admin', project: 'pa', credential: 'token' },
];

type Door = 'rest' | 'http-sql' | 'mysql' | 'postgres' | 'mcp';
/** MCP: the `query` tool over /mcp/ (the official client), signed in as HTTP is (cookie or bearer token). */
const SQL_DOORS: Door[] = ['http-sql', 'mysql', 'postgres', 'mcp'];

/** The projects of the world; `pa` and `pb` each hold one skill, `<project>_skill`. */
const PROJECTS = ['pa', 'pb'] as const;
const EXTERNAL = 'extpg';

/** What docs/security.md's rules look at in an operation. */
type What = {
  kind: 'read' | 'pushdown' | 'native' | 'write' | 'users';
  /** The project it names: a project's table, SHOW … FROM it, a route under /api/projects/<it>. */
  project?: string;
  /** The information_schema table it reads (SQL), or the listing route it reads (REST). */
  catalog?: 'skills' | 'events' | 'databases';
  /** A function beyond ordinary scalar and aggregate ones, pushed down to the external database. */
  unlisted?: string;
};

/** A request over REST. */
type RestCall = { method: 'get' | 'post' | 'delete'; path: string; body?: unknown };

/** What came back, the same shape from every door. */
type Answer =
  | { outcome: 'rows'; columns: string[]; rows: unknown[][] }
  | { outcome: 'done'; status?: number; body?: unknown }
  | { outcome: 'refused'; code: string | number; message: string }
  | { outcome: 'sign-in refused'; code: string | number; message: string }
  | { outcome: 'failed'; code: string | number | undefined; message: string };

type Scope = 'all' | string[];
type World = {
  t: TestApp;
  admin: string;
  hostname: string;
  /** Large objects in the external database (lo_import makes one). */
  largeObjects: () => Promise<number>;
  skillExists: (project: string, name: string) => Promise<boolean>;
};

type Operation = {
  id: string;
  what: What;
  /** Its text over the SQL doors (HTTP, MySQL, PostgreSQL), if it has one; `n`: a fresh number. */
  sql?: (n: number) => string;
  /** Its request over REST, if it has one. */
  rest?: (n: number) => RestCall;
  /** Done as the admin before it, outside what is measured (a skill to drop). */
  prepare?: (w: World, n: number) => Promise<void>;
  /** For an allowed answer: what it holds, given the projects the principal reaches. */
  allowed: (a: Answer, scope: Scope, w: World, n: number) => Promise<void> | void;
  /** For a refusal: what must still stand (besides the log's head). */
  refused?: (w: World, n: number, before: unknown) => Promise<void> | void;
  /** Read before a refused attempt, compared by `refused`. */
  snapshot?: (w: World, n: number) => Promise<unknown>;
  /** Allowed, it appends to the log (a write); every other answer leaves the log's head alone. */
  appends?: true;
};

// ---------------------------------------------------------------------------------------------
// The oracle: docs/security.md "Sign-in and roles", restated.

type Expected =
  { outcome: 'allowed'; scope: Scope } | { outcome: 'refused' } | { outcome: 'sign-in refused' };

/**
 * The role table: admin everything, users too; editor every resource (writes, DDL, native queries,
 * everything pushed down), not users; analyst reads (every GET, SELECT/SHOW/DESCRIBE), pushing
 * down only allow-listed functions, no native query; auditor the event log only (GET /api/events,
 * SELECTs on information_schema.EVENTS).
 */
const roleMay = (role: Role, w: What): boolean => {
  switch (role) {
    case 'admin':
      return true;
    case 'editor':
      return w.kind !== 'users';
    case 'analyst':
      return w.kind === 'read' || (w.kind === 'pushdown' && w.unlisted === undefined);
    case 'auditor':
      return w.kind === 'read' && w.catalog === 'events';
  }
};

/**
 * A project-scoped token: over REST only `/api/projects/<its project>/…` (with its user's role); in
 * SQL only that project's tables and information_schema, reading only (no DDL), every catalog
 * answering that project's rows only. An external database is not a project's table.
 */
const scopeMay = (project: string, door: Door, w: What): boolean =>
  door === 'rest'
    ? w.project === project
    : w.kind === 'read' && (w.project === project || (w.project === undefined && w.catalog !== undefined));

const expected = (p: Principal, door: Door, op: Operation): Expected => {
  if (!roleMay(p.role, op.what)) return { outcome: 'refused' };
  if (p.project === null) return { outcome: 'allowed', scope: 'all' };
  return scopeMay(p.project, door, op.what)
    ? { outcome: 'allowed', scope: [p.project] }
    : { outcome: 'refused' };
};

// ---------------------------------------------------------------------------------------------
// The catalogue of operations.

const column = (a: Answer, name: string) => {
  if (a.outcome !== 'rows') throw new Error(`rows expected: ${JSON.stringify(a)}`);
  const i = a.columns.findIndex((c) => c.toLowerCase() === name.toLowerCase());
  if (i < 0) throw new Error(`no column ${name} in ${a.columns.join(', ')}`);
  return a.rows.map((r) => String(r[i]));
};
const firstColumn = (a: Answer) => {
  if (a.outcome !== 'rows') throw new Error(`rows expected: ${JSON.stringify(a)}`);
  return a.rows.map((r) => String(r[0]));
};
const inScope = (scope: Scope, project: string) => scope === 'all' || scope.includes(project);
/** The projects a scope lets appear, of the world's. */
const visible = (scope: Scope) => PROJECTS.filter((p) => inScope(scope, p));
const restBody = (a: Answer) => {
  if (a.outcome !== 'done') throw new Error(`an answer expected: ${JSON.stringify(a)}`);
  return a.body;
};

/** Rows of skills (name, project) read from a catalog: within the scope, and every visible one there. */
const skillRows = (names: string[], projects: string[], scope: Scope, of: readonly string[] = PROJECTS) => {
  expect(projects.filter((p) => !inScope(scope, p))).toEqual([]);
  const expectedNames = visible(scope)
    .filter((p) => of.includes(p))
    .map((p) => `${p}_skill`);
  expect(names).toEqual(expect.arrayContaining(expectedNames));
  expect(names.filter((n) => /^p[ab]_skill$/.test(n)).sort()).toEqual(expectedNames.sort());
};

/** The databases a scope lists: its projects (and the system schema); unscoped, the integration too. */
const databaseNames = (names: string[], scope: Scope) => {
  if (scope === 'all')
    expect(names).toEqual(expect.arrayContaining(['information_schema', 'mindsdb', 'pa', 'pb', EXTERNAL]));
  else expect(names.sort()).toEqual(['information_schema', ...scope].sort());
};

/** A skill made over REST, as CREATE SKILL … USING type = 'text2sql', database = … makes it. */
const newSkill = (n: number) => ({
  skill: { name: `matrix_${n}`, type: 'text2sql', params: { database: EXTERNAL } },
});

const OPERATIONS: Operation[] = [
  // Reads of a project's tables (its own, and the other one).
  ...PROJECTS.map((project): Operation => ({
    id: `read ${project}.skills`,
    what: { kind: 'read', project },
    sql: () => `SELECT name, project FROM ${project}.skills`,
    rest: () => ({ method: 'get', path: `/api/projects/${project}/skills` }),
    allowed: (a) => {
      const names =
        a.outcome === 'rows' ? column(a, 'name') : (restBody(a) as { name: string }[]).map((s) => s.name);
      expect(names).toContain(`${project}_skill`);
      if (a.outcome === 'rows') expect(new Set(column(a, 'project'))).toEqual(new Set([project]));
    },
  })),
  ...PROJECTS.map((project): Operation => ({
    id: `SHOW SKILLS FROM ${project}`,
    what: { kind: 'read', project },
    sql: () => `SHOW SKILLS FROM ${project}`,
    allowed: (a) => {
      expect(column(a, 'NAME')).toContain(`${project}_skill`);
      expect(new Set(column(a, 'PROJECT'))).toEqual(new Set([project]));
    },
  })),
  ...PROJECTS.map((project): Operation => ({
    id: `DESCRIBE SKILL ${project}.${project}_skill`,
    what: { kind: 'read', project },
    sql: () => `DESCRIBE SKILL ${project}.${project}_skill`,
    allowed: (a) => expect(column(a, 'NAME')).toEqual([`${project}_skill`]),
  })),
  ...PROJECTS.map((project): Operation => ({
    id: `DESCRIBE DATABASE ${project}`,
    what: { kind: 'read', project },
    sql: () => `DESCRIBE DATABASE ${project}`,
    allowed: (a) => expect(column(a, 'NAME')).toEqual([project]),
  })),
  // The catalogs.
  {
    id: 'information_schema.skills',
    what: { kind: 'read', catalog: 'skills' },
    sql: () => 'SELECT NAME, PROJECT FROM information_schema.skills',
    allowed: (a, scope) => skillRows(column(a, 'NAME'), column(a, 'PROJECT'), scope),
  },
  {
    id: "information_schema.skills of pb (WHERE PROJECT = 'pb')",
    what: { kind: 'read', catalog: 'skills' },
    sql: () => "SELECT NAME, PROJECT FROM information_schema.skills WHERE PROJECT = 'pb'",
    allowed: (a, scope) => skillRows(column(a, 'NAME'), column(a, 'PROJECT'), scope, ['pb']),
  },
  {
    id: 'information_schema.events (the log)',
    what: { kind: 'read', catalog: 'events' },
    sql: () => 'SELECT DISTINCT STREAM FROM information_schema.events',
    rest: () => ({ method: 'get', path: '/api/events?limit=1000' }),
    allowed: (a, scope) => {
      const streams =
        a.outcome === 'rows'
          ? column(a, 'STREAM')
          : [...new Set((restBody(a) as { events: { stream: string }[] }).events.map((e) => e.stream))];
      if (scope === 'all')
        expect(streams).toEqual(expect.arrayContaining(['users', 'project-pa', 'project-pb']));
      // The world's projects hold skills only: a project's streams are its own stream.
      else expect(streams.sort()).toEqual(scope.map((p) => `project-${p}`).sort());
    },
  },
  {
    id: 'information_schema.databases',
    what: { kind: 'read', catalog: 'databases' },
    sql: () => 'SELECT NAME, TYPE, CONNECTION_DATA FROM information_schema.databases',
    rest: () => ({ method: 'get', path: '/api/databases' }),
    allowed: (a, scope) => {
      if (a.outcome === 'rows') {
        databaseNames(column(a, 'NAME'), scope);
        if (scope !== 'all') expect(column(a, 'CONNECTION_DATA').every((c) => c === 'null')).toBe(true);
      } else
        databaseNames(
          (restBody(a) as { name: string }[]).map((d) => d.name),
          scope,
        );
    },
  },
  {
    id: 'SHOW DATABASES',
    what: { kind: 'read', catalog: 'databases' },
    sql: () => 'SHOW DATABASES',
    allowed: (a, scope) => databaseNames(firstColumn(a), scope),
  },
  // Pushed down to the external database: ordinary, then each probe of issue 36.
  {
    id: 'pushed-down SELECT (ordinary functions)',
    what: { kind: 'pushdown' },
    sql: () => `SELECT upper(name) AS u, count(*) AS n FROM ${EXTERNAL}.t GROUP BY 1 ORDER BY 1`,
    allowed: (a) =>
      expect(a.outcome === 'rows' && a.rows.map((r) => r.map(String))).toEqual([
        ['ADA', '2'],
        ['BOB', '1'],
      ]),
  },
  {
    id: 'pushed-down pg_read_file()',
    what: { kind: 'pushdown', unlisted: 'pg_read_file' },
    sql: () => `SELECT pg_read_file('/etc/hostname') AS f FROM ${EXTERNAL}.t LIMIT 1`,
    allowed: (a, _s, w) => expect(a.outcome === 'rows' && a.rows).toEqual([[w.hostname]]),
  },
  {
    id: 'pushed-down lo_import()',
    what: { kind: 'pushdown', unlisted: 'lo_import' },
    sql: () => `SELECT lo_import('/etc/hostname') AS f FROM ${EXTERNAL}.t LIMIT 1`,
    allowed: (a) => expect(a.outcome === 'rows' && a.rows.length).toBe(1),
    snapshot: (w) => w.largeObjects(),
    refused: async (w, _n, before) => expect(await w.largeObjects()).toBe(before),
  },
  {
    id: 'pushed-down set_config()',
    what: { kind: 'pushdown', unlisted: 'set_config' },
    // Local to the statement's transaction: the pooled connection keeps its settings.
    sql: () => `SELECT set_config('application_name', 'role_matrix', true) AS f FROM ${EXTERNAL}.t LIMIT 1`,
    allowed: (a) => expect(a.outcome === 'rows' && a.rows).toEqual([['role_matrix']]),
  },
  {
    id: 'pushed-down pg_sleep(0)',
    what: { kind: 'pushdown', unlisted: 'pg_sleep' },
    sql: () => `SELECT pg_sleep(0) AS f FROM ${EXTERNAL}.t LIMIT 1`,
    allowed: (a) => expect(a.outcome === 'rows' && a.rows.length).toBe(1),
  },
  {
    id: 'native query',
    what: { kind: 'native' },
    sql: () => `SELECT * FROM ${EXTERNAL} (SELECT 42 AS answer)`,
    allowed: (a) => expect(a.outcome === 'rows' && a.rows.map((r) => r.map(String))).toEqual([['42']]),
  },
  // Writes: a skill made, a skill dropped (in pa), a skill made in pb (cross-project over REST).
  {
    id: 'create a skill in pa',
    appends: true,
    what: { kind: 'write', project: 'pa' },
    sql: (n) => `CREATE SKILL pa.matrix_${n} USING type = 'text2sql', database = '${EXTERNAL}'`,
    rest: (n) => ({
      method: 'post',
      path: '/api/projects/pa/skills',
      body: newSkill(n),
    }),
    allowed: async (a, _s, w, n) => {
      if (a.outcome === 'done' && a.status !== undefined) expect(a.status).toBe(201);
      expect(await w.skillExists('pa', `matrix_${n}`)).toBe(true);
    },
    refused: async (w, n) => expect(await w.skillExists('pa', `matrix_${n}`)).toBe(false),
  },
  {
    id: 'create a skill in pb',
    appends: true,
    what: { kind: 'write', project: 'pb' },
    rest: (n) => ({
      method: 'post',
      path: '/api/projects/pb/skills',
      body: newSkill(n),
    }),
    allowed: async (a, _s, w, n) => {
      expect(a.outcome === 'done' && a.status).toBe(201);
      expect(await w.skillExists('pb', `matrix_${n}`)).toBe(true);
    },
    refused: async (w, n) => expect(await w.skillExists('pb', `matrix_${n}`)).toBe(false),
  },
  {
    id: 'drop a skill in pa',
    appends: true,
    what: { kind: 'write', project: 'pa' },
    prepare: async (w, n) => {
      await w.t.http
        .post('/api/projects/pa/skills')
        .set('Cookie', w.admin)
        .send({ skill: { name: `victim_${n}`, type: 'x', params: {} } })
        .expect(201);
    },
    sql: (n) => `DROP SKILL pa.victim_${n}`,
    rest: (n) => ({ method: 'delete', path: `/api/projects/pa/skills/victim_${n}` }),
    allowed: async (a, _s, w, n) => {
      if (a.outcome === 'done' && a.status !== undefined) expect(a.status).toBe(204);
      expect(await w.skillExists('pa', `victim_${n}`)).toBe(false);
    },
    refused: async (w, n) => expect(await w.skillExists('pa', `victim_${n}`)).toBe(true),
  },
  // User management.
  {
    id: 'list users',
    what: { kind: 'users' },
    rest: () => ({ method: 'get', path: '/api/users' }),
    allowed: (a) =>
      expect((restBody(a) as { name: string }[]).map((u) => u.name)).toEqual(
        expect.arrayContaining([ADMIN.name, 'matrix_editor', 'matrix_auditor']),
      ),
  },
  {
    id: 'create a user',
    appends: true,
    what: { kind: 'users' },
    rest: (n) => ({
      method: 'post',
      path: '/api/users',
      body: { name: `made_${n}`, password: `made-${n}-password`, role: 'analyst' },
    }),
    allowed: (a, _s, _w, n) => {
      expect(a.outcome === 'done' && a.status).toBe(201);
      expect(restBody(a)).toMatchObject({ name: `made_${n}`, role: 'analyst' });
    },
  },
];

/** Every (door, operation) that has a text on that door. */
const STEPS = OPERATIONS.flatMap((op) =>
  (['rest', ...SQL_DOORS] as Door[])
    .filter((door) => (door === 'rest' ? op.rest !== undefined : op.sql !== undefined))
    .map((door) => ({ door, op })),
);

/** Generated sequences of (principal, door, operation). */
const steps = fc.array(
  fc.record({ principal: fc.constantFrom(...PRINCIPALS), cell: fc.constantFrom(...STEPS) }),
  {
    minLength: 1,
    maxLength: 8,
  },
);

// ---------------------------------------------------------------------------------------------
// The world and its doors.

describe.each(storeKinds)('the role matrix over every door (%s)', (store: StoreKind) => {
  let t: TestApp;
  let mysqlServer: MysqlServer;
  let pgServer: PgServer;
  let external: Awaited<ReturnType<typeof freshPostgresData>>;
  let remote: pg.Client;
  let world: World;
  /** How each principal signs in over HTTP: a session cookie, or its bearer token. */
  const httpHeaders = {} as Record<Principal['name'], [string, string]>;
  const passwords = {} as Record<Principal['name'], { user: string; password: string }>;
  const mysqlOpen = new Map<string, Promise<mysql.Connection>>();
  const pgOpen = new Map<string, Promise<pg.Client>>();
  const pgOpened: pg.Client[] = [];
  /** The app on a real port for the MCP door, and one MCP session per principal (opened on first use). */
  let mcpServer: Listening;
  const mcpOpen = new Map<string, Promise<McpClient>>();

  beforeAll(async () => {
    external = await freshPostgresData([
      'CREATE TABLE t (id int, name text)',
      "INSERT INTO t VALUES (1, 'ada'), (2, 'ada'), (3, 'bob')",
    ]);
    remote = new pg.Client({ ...external.parameters });
    await remote.connect();
    t = await startAuthApp(store);
    const admin = await login(t, ADMIN.name, ADMIN.password);
    httpHeaders.admin = ['Cookie', admin];
    passwords.admin = { user: ADMIN.name, password: ADMIN.password };
    for (const role of ['editor', 'analyst', 'auditor'] as const) {
      const u = await userWithRole(t, admin, `matrix_${role}`, role);
      httpHeaders[role] = ['Cookie', u.cookie];
      passwords[role] = { user: u.name, password: u.password };
    }
    for (const project of PROJECTS) {
      expect(await sqlOver(t, admin, `CREATE PROJECT ${project}`)).toMatchObject({ type: 'ok' });
      await t.http
        .post(`/api/projects/${project}/skills`)
        .set('Cookie', admin)
        .send({ skill: { name: `${project}_skill`, type: 'x', params: { k: 1 } } })
        .expect(201);
    }
    await t.http
      .post('/api/databases')
      .set('Cookie', admin)
      .send({ database: { name: EXTERNAL, engine: 'postgres', parameters: external.parameters } })
      .expect(201);
    const token = await projectToken(t, admin, 'pa');
    httpHeaders['token(pa)'] = ['Authorization', `Bearer ${token}`];
    // Over the wire doors a token can only be tried as its user's password.
    passwords['token(pa)'] = { user: ADMIN.name, password: token };
    mysqlServer = await startMysqlDoor(t);
    pgServer = await startPgDoor(t, { authOn: true, server: { host: '127.0.0.1' } });
    mcpServer = await listen(t);
    const hostname = (await remote.query<{ f: string }>("SELECT pg_read_file('/etc/hostname') AS f")).rows[0]!
      .f;
    world = {
      t,
      admin,
      hostname,
      largeObjects: async () =>
        Number(
          (await remote.query<{ n: string }>('SELECT count(*) AS n FROM pg_largeobject_metadata')).rows[0]!.n,
        ),
      skillExists: async (project, name) => {
        const res = await t.http.get(`/api/projects/${project}/skills/${name}`).set('Cookie', admin);
        if (res.status !== 200 && res.status !== 404) throw new Error(`GET skill: ${res.status}`);
        return res.status === 200;
      },
    };
  });

  afterAll(async () => {
    for (const c of mysqlOpen.values()) await c.then((x) => x.destroy()).catch(() => undefined);
    await Promise.all(pgOpened.map((c) => c.end().catch(() => undefined)));
    await mysqlServer?.close(0);
    await pgServer?.close(0);
    for (const c of mcpOpen.values()) await c.then((x) => x.close()).catch(() => undefined);
    await mcpServer?.close();
    await remote?.end();
    await t?.dispose();
    await external?.drop();
  });

  /** The log's head once this process's writes are projected (PostgreSQL's head can read low a moment). */
  const settledHead = async () => {
    const until = Date.now() + 5_000;
    for (;;) {
      const own = t.running.ctx.ownWrites('all');
      if (own) await own;
      const head = (await t.running.ctx.log.head()).position;
      // appliedThrough: past the cursor after commits out of position order, every event applied.
      if (head === (await t.running.ctx.projections.appliedThrough()) || Date.now() > until) return head;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  /** Events appended between two heads, MCP call records aside (the MCP door records every call). */
  const appendedBesidesMcpRecords = async (before: bigint, after: bigint) =>
    (await t.running.ctx.log.readPage({ after: before, limit: 10_000 })).filter(
      (e) => e.meta.position <= after && e.type !== 'McpCallRecorded',
    ).length;

  /** One connection per (principal, wire door), opened on first use; a refused sign-in is its answer. */
  const wire = <C>(open: Map<string, Promise<C>>, p: Principal, connect: () => Promise<C>) => {
    if (!open.has(p.name)) {
      const c = connect();
      c.catch(() => undefined);
      open.set(p.name, c);
    }
    return open.get(p.name)!;
  };

  const errorAnswer = (
    refusal: string | number,
    signIn: string | number,
    code: string | number | undefined,
    message: string,
  ): Answer =>
    code === refusal
      ? { outcome: 'refused', code, message }
      : code === signIn
        ? { outcome: 'sign-in refused', code, message }
        : { outcome: 'failed', code, message };

  /** Runs one operation as a principal through a door. */
  const run = async (p: Principal, door: Door, op: Operation, n: number): Promise<Answer> => {
    if (door === 'rest') {
      const call = op.rest!(n);
      const [header, value] = httpHeaders[p.name];
      const req = t.http[call.method](call.path).set(header, value);
      const res = call.body === undefined ? await req : await req.send(call.body as object);
      if (res.status === 401 || res.status === 403) {
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        return res.status === 401
          ? { outcome: 'sign-in refused', code: 401, message: String(res.body.detail) }
          : { outcome: 'refused', code: 403, message: String(res.body.detail) };
      }
      if (res.status >= 400)
        return { outcome: 'failed', code: res.status, message: JSON.stringify(res.body) };
      return { outcome: 'done', status: res.status, body: res.body };
    }
    const query = op.sql!(n);
    if (door === 'http-sql') {
      const [header, value] = httpHeaders[p.name];
      const res = await t.http.post('/api/sql/query').set(header, value).send({ query });
      if (res.status !== 200)
        return { outcome: 'failed', code: res.status, message: JSON.stringify(res.body) };
      const body = res.body as {
        type: string;
        data?: unknown[][];
        column_names?: string[];
        error_code?: number;
        error_message?: string;
      };
      if (body.type === 'error') return errorAnswer(1227, -1, body.error_code, body.error_message ?? '');
      if (body.type === 'table') return { outcome: 'rows', columns: body.column_names!, rows: body.data! };
      return { outcome: 'done' };
    }
    if (door === 'mcp') {
      const [header, value] = httpHeaders[p.name];
      const client = await wire(mcpOpen, p, () => mcpClient(mcpServer.url, { [header]: value }));
      const result = (await client.callTool({ name: 'query', arguments: { query } })) as {
        structuredContent?: {
          type: string;
          column_names?: string[];
          data?: unknown[][];
          error_code?: number | null;
          error_message?: string;
        };
      };
      const body = result.structuredContent ?? { type: 'error' };
      if (body.type === 'error')
        return errorAnswer(1227, -1, body.error_code ?? undefined, body.error_message ?? '');
      if (body.type === 'table') return { outcome: 'rows', columns: body.column_names!, rows: body.data! };
      return { outcome: 'done' };
    }
    if (door === 'mysql') {
      try {
        const c = await wire(mysqlOpen, p, () =>
          mysqlAs(mysqlServer, passwords[p.name].user, passwords[p.name].password),
        );
        const [rows, fields] = await c.query({ sql: query, rowsAsArray: true });
        return Array.isArray(rows)
          ? { outcome: 'rows', columns: (fields ?? []).map((f) => f.name), rows: rows as unknown[][] }
          : { outcome: 'done' };
      } catch (error) {
        const e = error as { errno?: number; message: string };
        return errorAnswer(1227, 1045, e.errno, e.message);
      }
    }
    try {
      const c = await wire(pgOpen, p, () =>
        pgClient(
          pgServer.port,
          { user: passwords[p.name].user, password: passwords[p.name].password },
          pgOpened,
        ),
      );
      const res = await c.query({ text: query, rowMode: 'array' });
      return res.fields.length > 0
        ? { outcome: 'rows', columns: res.fields.map((f) => f.name), rows: res.rows as unknown[][] }
        : { outcome: 'done' };
    } catch (error) {
      const e = error as { code?: string; message: string };
      return errorAnswer('42501', '28P01', e.code, e.message);
    }
  };

  /** Every cell of the matrix one step reached, by principal, door and operation. */
  const reached = new Set<string>();
  const cellOf = (p: Principal, door: Door, op: Operation) => `${p.name} / ${door} / ${op.id}`;
  let n = 0;

  /** What an answer said, for the failure message. */
  const said = (a: Answer) =>
    a.outcome === 'rows'
      ? `${a.rows.length} rows`
      : a.outcome === 'done'
        ? `done ${a.status ?? ''}`
        : `${a.outcome} ${a.code}: ${a.message}`;

  /** An assertion about an answer, failing with the case it is about. */
  const naming = async (context: object, check: () => Promise<void> | void) => {
    try {
      await check();
    } catch (error) {
      throw new Error(`${JSON.stringify(context)}\n${(error as Error).message}`);
    }
  };

  /**
   * One step: the principal runs the operation through the door; the answer is held to the oracle.
   * `counted`: the cell counts as reached (the kill check's steps, run against a bug, do not).
   */
  const step = async (p: Principal, door: Door, op: Operation, counted = true) => {
    n += 1;
    if (counted) reached.add(cellOf(p, door, op));
    const want = expected(p, door, op);
    if (op.prepare) await op.prepare(world, n);
    const snapshot = op.snapshot ? await op.snapshot(world, n) : undefined;
    const before = await settledHead();
    const answer = await run(p, door, op, n);
    const after = await settledHead();
    // Over MCP every call appends its own record (McpCallRecorded, on its session's stream): the
    // log's head is read past those, so it stands where it stood when nothing else was appended.
    const others = door === 'mcp' ? await appendedBesidesMcpRecords(before, after) : null;
    const context = {
      case: cellOf(p, door, op),
      statement: door === 'rest' ? op.rest!(n) : op.sql!(n),
      said: said(answer),
    };
    if (want.outcome === 'allowed') {
      expect({ ...context, outcome: answer.outcome }).toEqual({
        ...context,
        outcome: expect.stringMatching(/^(rows|done)$/),
      });
      await naming(context, () => op.allowed(answer, want.scope, world, n));
      if (op.appends)
        expect({ ...context, appended: others === null ? after > before : others > 0 }).toEqual({
          ...context,
          appended: true,
        });
      else if (others !== null)
        expect({ ...context, appendedBesidesRecords: others }).toEqual({
          ...context,
          appendedBesidesRecords: 0,
        });
      else expect({ ...context, head: after }).toEqual({ ...context, head: before });
    } else {
      expect({ ...context, outcome: answer.outcome }).toEqual({ ...context, outcome: want.outcome });
      // Nothing half-applied: the log stands where it stood, and so does what the operation would change.
      if (others !== null)
        expect({ ...context, appendedBesidesRecords: others }).toEqual({
          ...context,
          appendedBesidesRecords: 0,
        });
      else expect({ ...context, head: after }).toEqual({ ...context, head: before });
      if (op.refused) await naming(context, () => op.refused!(world, n, snapshot));
    }
    return want.outcome;
  };

  it('given generated sequences of (principal, door, operation), each answer is what docs/security.md promises, and a refusal appends nothing', async () => {
    const outcomes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(steps, async (sequence) => {
        for (const { principal: p, cell } of sequence) outcomes.add(await step(p, cell.door, cell.op));
      }),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    expect([...outcomes].sort()).toEqual(['allowed', 'refused']);
  }, 120_000);

  it("kill check: a token signed in with its user's whole reach (its project scope dropped) is caught", async () => {
    // The bug: the identity a token carries, over HTTP (bearer) and the wire doors (a token as the
    // password), made with `principalOf(user, null)` instead of the token's project.
    const users = t.running.services.users;
    const unscoped =
      <A extends unknown[]>(resolve: (...args: A) => ReturnType<typeof users.fromToken>) =>
      async (...args: A) => {
        const identity = await resolve(...args);
        return identity && { ...identity, principal: { ...identity.principal, project: null } };
      };
    const bearer = unscoped(users.fromToken);
    const wire = unscoped(users.identityOfToken);
    const fromToken = jest.spyOn(users, 'fromToken').mockImplementation(bearer);
    const identityOfToken = jest.spyOn(users, 'identityOfToken').mockImplementation(wire);
    try {
      await expectCaught(
        fc.asyncProperty(steps, async (sequence) => {
          for (const { principal: p, cell } of sequence) await step(p, cell.door, cell.op, false);
        }),
        { seed: SEED, numRuns: propertyRuns(RUNS) },
      );
    } finally {
      fromToken.mockRestore();
      identityOfToken.mockRestore();
    }
  }, 120_000);

  it('then every cell of the matrix the sequences did not reach answers as promised too', async () => {
    const cells = PRINCIPALS.flatMap((p) => STEPS.map(({ door, op }) => ({ p, door, op })));
    // Every cell is tried, and every one that disagrees with the oracle is listed.
    const disagreements: string[] = [];
    for (const { p, door, op } of cells)
      if (!reached.has(cellOf(p, door, op)))
        await step(p, door, op).catch((error: Error) => disagreements.push(error.message));
    expect(disagreements).toEqual([]);
    expect(reached.size).toBe(cells.length);
  }, 120_000);
});
