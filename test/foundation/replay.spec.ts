import { allProjections } from '../../projections';
import fs from 'node:fs';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { postgresParameters } from '../support/external';

/** Every projection table, in a stable order. */
const snapshot = async (t: TestApp) => {
  const tables: Record<string, unknown[]> = {};
  for (const p of allProjections)
    tables[p.table] = await t.running.ctx.duck.query(
      `SELECT * FROM "${p.table}" ORDER BY ${p.key ? `"${p.key}"` : 'ALL'}`,
    );
  return tables;
};

const seed = async (t: TestApp) => {
  for (let i = 0; i < 15; i++)
    await t.http
      .post('/api/projects')
      .send({ name: `p${i}` })
      .expect(201);
  for (let i = 0; i < 5; i++) await t.http.delete(`/api/projects/p${i * 3}`).expect(204);
  await t.http
    .post('/api/databases')
    .send({
      database: {
        name: 'pg',
        engine: 'postgres',
        parameters: postgresParameters({ password: 'p' }),
      },
    })
    .expect(201);
  await t.http
    .put('/api/databases/pg')
    .send({ database: { parameters: postgresParameters({ password: '******', database: 'test' }) } })
    .expect(200);
  const api = '/api/projects/p1';
  await t.http
    .post(`${api}/skills`)
    .send({ skill: { name: 's1', type: 'sql', params: { database: 'pg', api_key: 'k' } } })
    .expect(201);
  await t.http
    .post(`${api}/skills`)
    .send({ skill: { name: 's2', type: 'x', params: {} } })
    .expect(201);
  await t.http
    .post(`${api}/agents`)
    .send({ agent: { name: 'a1', skills: ['s1', { name: 's2', tables: ['t'] }] } })
    .expect(201);
  await t.http
    .post(`${api}/agents`)
    .send({ agent: { name: 'a2', model: { api_key: 'sk' } } })
    .expect(201);
  await t.http
    .put(`${api}/skills/s1`)
    .send({ skill: { name: 's1_renamed' } })
    .expect(200);
  await t.http.delete(`${api}/skills/s2`).expect(204);
  await t.http
    .post(`${api}/chatbots`)
    .send({ chatbot: { name: 'b1', agent_name: 'a1', database_name: 'pg' } })
    .expect(201);
  await t.http
    .post(`${api}/chatbots`)
    .send({ chatbot: { name: 'b2', agent_name: 'a2', database_name: 'pg' } })
    .expect(201);
  await t.http
    .put(`${api}/agents/a1`)
    .send({ agent: { name: 'a1_renamed' } })
    .expect(200);
  await t.http.delete(`${api}/agents/a2`).expect(204);
};

describe.each(storeKinds)('replay and restart on %s', (store) => {
  // Each test rebuilds, deletes or restarts the read model: each on an app of its own.
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  /** A seeded app, with small batches so that a rebuild crosses many batch boundaries. */
  const givenSeededApp = async () => {
    const app = await startTestApp(store, { PROJECTION_BATCH_SIZE: '4' });
    t = app;
    await seed(app);
    return app;
  };

  it('rebuilds projections identical to the live ones', async () => {
    const app = await givenSeededApp();
    const live = await snapshot(app);
    expect(live.projects).toHaveLength(11);
    expect(live.agents).toHaveLength(1);
    expect(live.chatbots).toEqual([
      expect.objectContaining({ NAME: 'b1', AGENT: 'a1_renamed' }),
      expect.objectContaining({ NAME: 'b2', AGENT: null, IS_RUNNING: false }),
    ]);
    expect(live.agents![0]).toMatchObject({ NAME: 'a1_renamed', SKILLS: ['s1_renamed'] });

    const { events } = await app.running.ctx.projections.rebuild();

    expect(events).toBe(live.events!.length);
    expect(await snapshot(app)).toEqual(live);
  });

  it('loses nothing when the DuckDB file is deleted and the service restarts', async () => {
    let app = await givenSeededApp();
    const live = await snapshot(app);
    const listed = (await app.http.get('/api/projects').expect(200)).body;

    await app.stop();
    fs.rmSync(app.config.duckdbFile, { force: true });
    fs.rmSync(`${app.config.duckdbFile}.wal`, { force: true });
    app = t = await app.restart();

    expect(await snapshot(app)).toEqual(live);
    expect((await app.http.get('/api/projects').expect(200)).body).toEqual(listed);
    const log = await app.http.get('/api/events?stream=project-mindsdb').expect(200);
    expect(log.body.events).toHaveLength(1); // the default project is not created twice
  });

  it('keeps every acknowledged write across a restart and resumes from its checkpoint', async () => {
    let app = await givenSeededApp();
    const names = Array.from({ length: 10 }, (_, i) => `after_${i}`);
    await Promise.all(names.map((name) => app.http.post('/api/projects').send({ name }).expect(201)));
    // Project creates answer ahead of the read model: where a read would stand, once it waited.
    await app.running.ctx.ownWrites('all');
    const position = app.running.ctx.projections.position;

    app = t = await app.restart();

    expect(app.running.ctx.projections.position).toBe(position);
    const listed = (await app.http.get('/api/projects').expect(200)).body.map(
      (p: { name: string }) => p.name,
    );
    for (const n of names) expect(listed).toContain(n);
  });
});

describe('GET /api/events', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    await seed(t);
  });
  afterAll(() => t.dispose());

  it('pages through the log in order with after/limit', async () => {
    const all = (await t.http.get('/api/events?limit=1000').expect(200)).body.events as {
      position: number;
    }[];
    const paged: { position: number }[] = [];
    let after = 0;
    for (;;) {
      const page = await t.http.get(`/api/events?after=${after}&limit=7`).expect(200);
      if (page.body.events.length === 0) break;
      paged.push(...page.body.events);
      after = page.body.next_after;
    }
    expect(paged).toEqual(all);
    const positions = all.map((e) => e.position);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(all[0]).toEqual({
      position: 1,
      stream: 'project-mindsdb',
      stream_position: 1,
      event_id: expect.any(String),
      type: 'ProjectCreated',
      schema_version: 1,
      data: { name: 'mindsdb', createdAt: expect.any(String) },
      recorded_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/),
      // Who: the default project is the service's own doing at start.
      actor: 'system:startup',
      request_id: 'startup',
      interface: 'system',
    });
  });

  it('filters one stream and validates its query', async () => {
    const res = await t.http.get('/api/events?stream=project-p2').expect(200);
    expect(res.body.events.map((e: { type: string }) => e.type)).toEqual(['ProjectCreated']);
    const p1 = await t.http.get('/api/events?stream=project-p1').expect(200);
    expect(p1.body.events.length).toBeGreaterThan(5);
    for (const e of p1.body.events) expect(e.stream).toBe('project-p1');
    const bad = await t.http.get('/api/events?limit=0').expect(400);
    expect(bad.body.detail).toMatch(/^query\.limit: /);
  });
});
