import { storeKinds, type TestApp } from '../support/app';
import { ADMIN, login, mysqlAs, sqlOver, startAuthApp, startMysqlDoor } from './support';

type Row = [string, string | null, string | null, string | null];

describe.each(storeKinds)('who did what, recorded on every event, on %s', (store) => {
  let t: TestApp;
  let admin: string;
  let adminId: number;
  beforeAll(async () => {
    t = await startAuthApp(store);
    admin = await login(t, ADMIN.name, ADMIN.password);
    adminId = (
      (await t.http.get('/api/users').set('Cookie', admin).expect(200)).body as { id: number; name: string }[]
    ).find((u) => u.name === ADMIN.name)!.id;
  });
  afterAll(() => t?.dispose());

  const eventsOf = async (stream: string) =>
    (
      await sqlOver(
        t,
        admin,
        `SELECT TYPE, ACTOR, REQUEST_ID, INTERFACE FROM information_schema.EVENTS WHERE STREAM = '${stream}' ORDER BY GLOBAL_POSITION`,
      )
    ).data as Row[];

  it('names the signed-in user, the request id and the SQL interface', async () => {
    await t.http
      .post('/api/sql/query')
      .set('Cookie', admin)
      .set('X-Request-Id', 'who-sql-1')
      .send({ query: 'CREATE PROJECT who_sql' })
      .expect(200);
    expect(await eventsOf('project-who_sql')).toEqual([
      ['ProjectCreated', `user:${adminId}`, 'who-sql-1', 'sql'],
    ]);
  });

  it('names the token (not its user) for a bearer request over REST', async () => {
    const { id, token } = (
      await t.http.post('/api/tokens').set('Cookie', admin).send({ name: 'who' }).expect(201)
    ).body as { id: string; token: string };
    await sqlOver(t, admin, 'CREATE PROJECT who_rest');
    await t.http
      .post('/api/projects/who_rest/skills')
      .set('Authorization', `Bearer ${token}`)
      .send({ skill: { name: 'by_token', type: 't', params: {} } })
      .expect(201);
    const rows = await eventsOf('project-who_rest');
    expect(rows[rows.length - 1]).toEqual(['SkillCreated', `token:${id}`, expect.any(String), 'rest']);
    const api = await t.http.get('/api/events?stream=project-who_rest').set('Cookie', admin).expect(200);
    expect(api.body.events[api.body.events.length - 1]).toMatchObject({
      type: 'SkillCreated',
      actor: `token:${id}`,
      interface: 'rest',
    });
  });

  it('names the MySQL user and the mysql interface', async () => {
    const server = await startMysqlDoor(t);
    const c = await mysqlAs(server, ADMIN.name, ADMIN.password);
    try {
      await c.query('CREATE PROJECT who_mysql');
    } finally {
      c.destroy();
      await server.close(0);
    }
    expect(await eventsOf('project-who_mysql')).toEqual([
      ['ProjectCreated', `user:${adminId}`, expect.any(String), 'mysql'],
    ]);
  });

  it('names the system for what the service does at start', async () => {
    expect((await eventsOf('project-mindsdb'))[0]).toEqual([
      'ProjectCreated',
      'system:startup',
      'startup',
      'system',
    ]);
  });

  it('rebuilds the same actor columns from the log (metadata: rebuild equals live)', async () => {
    const live = (
      await sqlOver(
        t,
        admin,
        'SELECT GLOBAL_POSITION, ACTOR, REQUEST_ID, INTERFACE FROM information_schema.EVENTS ORDER BY 1',
      )
    ).data;
    const session = admin;
    t = await t.restart({ DUCKDB_FILE: `${t.config.dataDir}/rebuilt.duckdb` });
    const rebuilt = (
      await sqlOver(
        t,
        session,
        'SELECT GLOBAL_POSITION, ACTOR, REQUEST_ID, INTERFACE FROM information_schema.EVENTS ORDER BY 1',
      )
    ).data;
    expect(rebuilt!.slice(0, live!.length)).toEqual(live);
  });
});
