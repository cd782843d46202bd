/**
 * Issue 36: a token made for project `pa` got 403 on REST for `pb`, but over SQL the catalog
 * (information_schema, SHOW, DESCRIBE) listed pb's skills, every stream of the log (users
 * included), other integrations' connection data, and every agent run and chat message. Every
 * catalog table now answers a project-scoped caller its project's rows only, from one rule
 * (src/sql/catalog.ts, scopeConditions), and each role's reads agree with what REST lets it read.
 */
import { problemOf, type StoreKind, type TestApp } from '../support/app';
import { ADMIN, login, sqlOver, startAuthApp, userWithRole } from './support';

type Answer = Awaited<ReturnType<typeof sqlOver>>;

const setUp = async (t: TestApp, admin: string, database: string) => {
  for (const p of ['pa', 'pb']) {
    expect((await sqlOver(t, admin, `CREATE PROJECT ${p}`)).type).toBe('ok');
    await t.http
      .post(`/api/projects/${p}/skills`)
      .set('Cookie', admin)
      .send({ skill: { name: `${p}_skill`, type: 'x', params: { k: 1 } } })
      .expect(201);
    expect((await sqlOver(t, admin, `CREATE VIEW ${p}.${p}_view AS (SELECT 1 AS one)`)).type).toBe('ok');
    expect((await sqlOver(t, admin, `CREATE JOB ${p}.${p}_job (SELECT 1) EVERY hour`)).type).toBe('ok');
  }
  expect(
    (
      await sqlOver(
        t,
        admin,
        `CREATE DATABASE ${database} WITH ENGINE = 'postgres', PARAMETERS = {"host": "127.0.0.1", "port": 5432, "user": "postgres", "password": "scoped-catalog-secret", "database": "postgres"}`,
      )
    ).type,
  ).toBe('ok');
};

const tokenFor = async (t: TestApp, cookie: string, project: string | null) => {
  const res = await t.http
    .post('/api/tokens')
    .set('Cookie', cookie)
    .send({ name: `t_${Math.random().toString(36).slice(2, 8)}`, project })
    .expect(201);
  return `Bearer ${(res.body as { token: string }).token}`;
};

const sqlAs = async (t: TestApp, bearer: string, query: string) =>
  (await t.http.post('/api/sql/query').set('Authorization', bearer).send({ query }).expect(200))
    .body as Answer;

const column = (a: Answer, name: string) => {
  const i = a.column_names!.indexOf(name);
  return a.data!.map((r) => r[i]);
};

describe('a project-scoped token over SQL (sqlite)', () => {
  let t: TestApp;
  let admin: string;
  let bearer: string;
  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    admin = await login(t, ADMIN.name, ADMIN.password);
    await setUp(t, admin, 'scoped_ext');
    bearer = await tokenFor(t, admin, 'pa');
  });
  afterAll(() => t?.dispose());

  it.each([
    'SKILLS',
    'JOBS',
    'JOBS_HISTORY',
    'JOB_RUNS',
    'VIEWS',
    'AGENT_RUNS',
    'CHAT_MESSAGES',
    'MODELS',
    'AGENTS',
  ])('information_schema.%s answers pa rows only', async (table) => {
    const answer = await sqlAs(t, bearer, `SELECT * FROM information_schema.${table}`);
    expect(answer.type).toBe('table');
    expect(column(answer, 'PROJECT').every((p) => p === 'pa')).toBe(true);
    // The admin, unscoped, sees both projects' rows of the tables the set-up filled.
    if (['SKILLS', 'JOBS', 'VIEWS'].includes(table)) {
      const all = await sqlOver(t, admin, `SELECT PROJECT FROM information_schema.${table}`);
      expect(new Set(column(all, 'PROJECT'))).toEqual(new Set(['pa', 'pb']));
      expect(column(answer, 'PROJECT').length).toBe(1);
    }
  });

  it("lists no integration (nor its connection data), and only pa's project", async () => {
    const answer = await sqlAs(
      t,
      bearer,
      'SELECT NAME, TYPE, CONNECTION_DATA FROM information_schema.DATABASES',
    );
    expect(answer.data).toEqual([
      ['information_schema', 'system', null],
      ['pa', 'project', null],
    ]);
    expect(
      JSON.stringify(await sqlAs(t, bearer, 'SELECT * FROM information_schema.ML_ENGINES')),
    ).not.toContain('scoped-catalog-secret');
    const shown = await sqlAs(t, bearer, 'SHOW DATABASES');
    expect(shown.data).toEqual([['information_schema'], ['pa']]);
    const tables = await sqlAs(t, bearer, 'SELECT DISTINCT TABLE_SCHEMA FROM information_schema.TABLES');
    expect(new Set(column(tables, 'TABLE_SCHEMA'))).toEqual(new Set(['information_schema', 'pa']));
    const columns = await sqlAs(t, bearer, 'SELECT DISTINCT TABLE_SCHEMA FROM information_schema.COLUMNS');
    expect(new Set(column(columns, 'TABLE_SCHEMA'))).toEqual(new Set(['information_schema', 'pa']));
    expect(await sqlAs(t, bearer, 'SHOW TABLES FROM scoped_ext')).toMatchObject({ type: 'error' });
  });

  it("reads pa's streams of the log only, never users or sessions", async () => {
    const answer = await sqlAs(t, bearer, 'SELECT DISTINCT STREAM FROM information_schema.EVENTS');
    const streams = column(answer, 'STREAM') as string[];
    expect(streams).toContain('project-pa');
    expect(streams.every((s) => s === 'project-pa' || /^job-runs-\d+$/.test(s))).toBe(true);
    const all = column(
      await sqlOver(t, admin, 'SELECT DISTINCT STREAM FROM information_schema.EVENTS'),
      'STREAM',
    );
    expect(all).toEqual(expect.arrayContaining(['users', 'project-pb', 'database-scoped_ext']));
  });

  it('answers SHOW and DESCRIBE of another project as its SELECTs: refused', async () => {
    for (const q of [
      'SHOW SKILLS FROM pb',
      'SHOW TABLES FROM pb',
      'SELECT * FROM pb.skills',
      'DESCRIBE pb.skills',
    ]) {
      const answer = await sqlAs(t, bearer, q);
      expect({ q, answer }).toMatchObject({ answer: { type: 'error' } });
    }
    expect(column(await sqlAs(t, bearer, 'SHOW SKILLS FROM pa'), 'NAME')).toEqual(['pa_skill']);
    const describe = await sqlAs(t, bearer, 'DESCRIBE DATABASE pb');
    expect(describe).toMatchObject({ type: 'error' });
  });

  it('agrees with REST, table by table and project by project', async () => {
    for (const [resource, table] of [
      ['skills', 'SKILLS'],
      ['jobs', 'JOBS'],
      ['views', 'VIEWS'],
    ] as const)
      for (const p of ['pa', 'pb']) {
        const rest = await t.http.get(`/api/projects/${p}/${resource}`).set('Authorization', bearer);
        const sql = await sqlAs(
          t,
          bearer,
          `SELECT NAME FROM information_schema.${table} WHERE PROJECT = '${p}'`,
        );
        const restNames = rest.status === 200 ? (rest.body as { name: string }[]).map((r) => r.name) : [];
        expect({ resource, p, names: column(sql, 'NAME') }).toEqual({ resource, p, names: restNames });
        expect({ resource, p, status: rest.status }).toEqual({ resource, p, status: p === 'pa' ? 200 : 403 });
      }
    // Databases: REST names pa and refuses the rest; SQL lists pa (and the system schema).
    await t.http.get('/api/projects/pa').set('Authorization', bearer).expect(200);
    for (const path of ['/api/projects/pb', '/api/databases', '/api/databases/scoped_ext'])
      problemOf(await t.http.get(path).set('Authorization', bearer).expect(403));
  });

  it("holds each role's catalog reads to what REST lets it read", async () => {
    const roles = ['editor', 'analyst', 'auditor'] as const;
    for (const role of roles) {
      const user = await userWithRole(t, admin, `cat_${role}`, role);
      for (const project of [null, 'pa'] as const) {
        const caller = await tokenFor(t, user.cookie, project);
        const events = await t.http.get('/api/events?limit=5').set('Authorization', caller);
        const sqlEvents = await sqlAs(t, caller, 'SELECT STREAM FROM information_schema.EVENTS');
        const skills = await t.http.get('/api/projects/pa/skills').set('Authorization', caller);
        const sqlSkills = await sqlAs(t, caller, 'SELECT NAME FROM information_schema.SKILLS');
        const row = { role, project, events: events.status, skills: skills.status };
        // The log: REST reads it all or nothing; SQL all of it, or (scoped) pa's streams only.
        if (events.status === 200) expect({ ...row, sql: sqlEvents.type }).toEqual({ ...row, sql: 'table' });
        else if (sqlEvents.type === 'table')
          expect({
            ...row,
            streams: [...new Set(column(sqlEvents, 'STREAM'))].filter(
              (s) => s !== 'project-pa' && !/^job-runs-/.test(String(s)),
            ),
          }).toEqual({ ...row, streams: [] });
        // Skills: SQL answers exactly when REST does, the same names.
        if (skills.status === 200)
          expect({ ...row, names: column(sqlSkills, 'NAME').sort() }).toEqual({
            ...row,
            names: (project === null ? ['pa_skill', 'pb_skill'] : ['pa_skill']).sort(),
          });
        else expect({ ...row, sql: sqlSkills.type }).toEqual({ ...row, sql: 'error' });
        const expectedSkills = role === 'auditor' ? 403 : 200;
        expect(row).toEqual({ role, project, events: project === null ? 200 : 403, skills: expectedSkills });
      }
    }
  });
});

describe.each(['postgres'] as StoreKind[])('a project-scoped token over SQL (%s)', (store) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startAuthApp(store);
    admin = await login(t, ADMIN.name, ADMIN.password);
    await setUp(t, admin, 'scoped_ext_pg');
  });
  afterAll(() => t?.dispose());

  it("answers pa's skills, streams and databases only", async () => {
    const bearer = await tokenFor(t, admin, 'pa');
    expect((await sqlAs(t, bearer, 'SELECT NAME, PROJECT FROM information_schema.skills')).data).toEqual([
      ['pa_skill', 'pa'],
    ]);
    const streams = column(
      await sqlAs(t, bearer, 'SELECT DISTINCT STREAM FROM information_schema.events'),
      'STREAM',
    );
    expect(streams.every((s) => s === 'project-pa' || /^job-runs-/.test(String(s)))).toBe(true);
    expect(JSON.stringify(await sqlAs(t, bearer, 'SELECT * FROM information_schema.databases'))).not.toMatch(
      /scoped_ext_pg|pb/,
    );
  });
});
