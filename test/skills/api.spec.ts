import { projectAggregate } from '../../src/projects/aggregate';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';

const ts = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/;

describe.each(storeKinds)('skills API on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
    await t.http.post('/api/projects').send({ name: 'proj' }).expect(201);
  });
  afterAll(() => t.dispose());

  it('creates a skill (201) in MindsDB shape and reads it back by name (any case) or id', async () => {
    const res = await t.http
      .post('/api/projects/proj/skills')
      .send({ skill: { name: 'TEST_create_skill', type: 'Knowledge Base', params: { k1: 'v1' } } })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'TEST_create_skill',
      project_id: expect.any(Number),
      agent_ids: [],
      type: 'Knowledge Base',
      params: { k1: 'v1' },
      created_at: expect.stringMatching(ts),
      updated_at: expect.stringMatching(ts),
    });
    const byName = await t.http.get('/api/projects/PROJ/skills/test_CREATE_skill').expect(200);
    expect(byName.body).toEqual(res.body);
    expect(byName.headers.etag).toBe(`"${res.body.id}"`);
    expect((await t.http.get(`/api/projects/proj/skills/${res.body.id}`).expect(200)).body).toEqual(res.body);
    const list = await t.http.get('/api/projects/proj/skills/').expect(200);
    expect(list.body).toEqual([res.body]);
  });

  it('answers 400 naming what is missing, 404 for unknown projects and skills, 409 for duplicates', async () => {
    expect(problemOf(await t.http.post('/api/projects/proj/skills').send({}).expect(400)).detail).toBe(
      'body.skill: Must provide "skill" parameter in POST body',
    );
    expect(
      problemOf(
        await t.http
          .post('/api/projects/proj/skills')
          .send({ skill: { type: 'x', params: {} } })
          .expect(400),
      ).detail,
    ).toBe('body.skill.name: Missing "name" field for skill');
    expect(
      problemOf(
        await t.http
          .post('/api/projects/proj/skills')
          .send({ skill: { name: 'x', params: {} } })
          .expect(400),
      ).detail,
    ).toBe('body.skill.type: Missing "type" field for skill');
    expect(
      problemOf(
        await t.http
          .post('/api/projects/proj/skills')
          .send({ skill: { name: 'x', type: 'y' } })
          .expect(400),
      ).detail,
    ).toBe('body.skill.params: Missing "params" field for skill');
    const unknownProject = await t.http
      .post('/api/projects/nope/skills')
      .send({ skill: { name: 'x', type: 'y', params: {} } })
      .expect(404);
    expect(problemOf(unknownProject)).toEqual({
      title: 'Project not found',
      detail: 'Project name nope does not exist',
      status: 404,
    });
    await t.http.get('/api/projects/nope/skills').expect(404);
    expect(problemOf(await t.http.get('/api/projects/proj/skills/ghost').expect(404)).title).toBe(
      'Skill not found',
    );
    const dup = await t.http
      .post('/api/projects/proj/skills')
      .send({ skill: { name: 'test_create_skill', type: 'y', params: {} } })
      .expect(409);
    expect(problemOf(dup).detail).toMatch(/already exists/);
  });

  it('validates the params of known skill types', async () => {
    const res = await t.http
      .post('/api/projects/proj/skills')
      .send({ skill: { name: 'bad_sql', type: 'sql', params: { tables: ['t1'] } } })
      .expect(400);
    expect(problemOf(res)).toMatchObject({
      title: 'Invalid sql skill',
      detail: expect.stringMatching(/params\.database/),
    });
    await t.http.get('/api/projects/proj/skills/bad_sql').expect(404);
    await t.http
      .post('/api/projects/proj/skills')
      .send({
        skill: {
          name: 'good_sql',
          type: 'text2sql',
          params: { database: 'db1', tables: ['t1', { schema: 's', table: 't2' }] },
        },
      })
      .expect(201);
  });

  it('PUT updates (200: params merged, null removes) or creates under the URL name (201)', async () => {
    await t.http
      .post('/api/projects/proj/skills')
      .send({ skill: { name: 'merge_me', type: 't', params: { k1: 'v1', k2: 'v2' } } })
      .expect(201);
    const updated = await t.http
      .put('/api/projects/proj/skills/merge_me')
      .send({ skill: { type: 't2', params: { k1: null, k2: 'v2.1', k3: 'v3' } } })
      .expect(200);
    expect(updated.body).toMatchObject({ name: 'merge_me', type: 't2', params: { k2: 'v2.1', k3: 'v3' } });
    const created = await t.http
      .put('/api/projects/proj/skills/url_name')
      .send({ skill: { name: 'body_name', type: 'x', params: { a: 1 } } })
      .expect(201);
    expect(created.body).toMatchObject({ name: 'url_name', type: 'x', params: { a: 1 } });
    expect(
      problemOf(await t.http.put('/api/projects/proj/skills/no_type').send({ skill: {} }).expect(400)).detail,
    ).toMatch(/Missing "type"/);
  });

  it('masks secrets in answers and projections, and keeps them when PUT sends the mask back', async () => {
    const res = await t.http
      .post('/api/projects/proj/skills')
      .send({
        skill: {
          name: 'secretive',
          type: 't',
          params: { api_key: 'sk-live-123', nested: { password: 'pw-456' } },
        },
      })
      .expect(201);
    expect(res.body.params).toEqual({ api_key: '******', nested: { password: '******' } });
    await t.http
      .put('/api/projects/proj/skills/secretive')
      .send({ skill: { params: { ...res.body.params, extra: 1 } } })
      .expect(200);
    const rows = await t.running.ctx.duck.query("SELECT PARAMS FROM skills WHERE NAME = 'secretive'");
    expect(JSON.stringify(rows)).not.toMatch(/sk-live-123|pw-456/);
    const events = await t.http.get('/api/events?stream=project-proj&limit=1000').expect(200);
    expect(JSON.stringify(events.body)).not.toMatch(/sk-live-123|pw-456/);
    const { state } = await t.running.ctx.commands.load('project-proj', projectAggregate);
    const skill = [...state.skills.values()].find((s) => s.name === 'secretive')!;
    expect(skill.params).toEqual({ api_key: 'sk-live-123', nested: { password: 'pw-456' }, extra: 1 });
  });

  it('checks If-Match on PUT and DELETE (412, nothing changed)', async () => {
    const got = await t.http.get('/api/projects/proj/skills/merge_me').expect(200);
    await t.http
      .put('/api/projects/proj/skills/merge_me')
      .set('If-Match', '"1"')
      .send({ skill: { type: 'zzz' } })
      .expect(412);
    await t.http.delete('/api/projects/proj/skills/merge_me').set('If-Match', '"1"').expect(412);
    expect((await t.http.get('/api/projects/proj/skills/merge_me').expect(200)).body).toEqual(got.body);
    const ok = await t.http
      .put('/api/projects/proj/skills/merge_me')
      .set('If-Match', got.headers.etag!)
      .send({ skill: { type: 'zzz' } })
      .expect(200);
    expect(ok.headers.etag).not.toBe(got.headers.etag);
  });

  it('filters skills by agent (name or id) and shows agent_ids', async () => {
    await t.http
      .post('/api/projects/proj/skills')
      .send({ skill: { name: 'for_agent', type: 't', params: {} } })
      .expect(201);
    const agent = await t.http
      .post('/api/projects/proj/agents')
      .send({
        agent: {
          name: 'skilled',
          model_name: 'gpt-4o',
          provider: 'openai',
          skills: ['for_agent', 'good_sql'],
        },
      })
      .expect(201);
    const byName = await t.http.get('/api/projects/proj/skills?agent=SKILLED').expect(200);
    expect(byName.body.map((s: { name: string }) => s.name).sort()).toEqual(['for_agent', 'good_sql']);
    for (const s of byName.body) expect(s.agent_ids).toEqual([agent.body.id]);
    const byId = await t.http.get(`/api/projects/proj/skills?agent=${agent.body.id}`).expect(200);
    expect(byId.body).toEqual(byName.body);
    expect(problemOf(await t.http.get('/api/projects/proj/skills?agent=ghost').expect(404)).title).toBe(
      'Agent not found',
    );
  });

  it('deleting a skill (204, empty) detaches it from its agents, and the log says so', async () => {
    const res = await t.http.delete('/api/projects/proj/skills/for_agent').expect(204);
    expect(res.text).toBe('');
    await t.http.get('/api/projects/proj/skills/for_agent').expect(404);
    const agent = await t.http.get('/api/projects/proj/agents/skilled').expect(200);
    expect(agent.body.skills.map((s: { name: string }) => s.name)).toEqual(['good_sql']);
    const events = (await t.http.get('/api/events?stream=project-proj&limit=1000').expect(200)).body.events;
    const last = events.slice(-2).map((e: { type: string }) => e.type);
    expect(last).toEqual(['SkillDeleted', 'SkillDetachedFromAgent']);
    const row = await t.running.ctx.duck.query("SELECT SKILLS FROM agents WHERE NAME = 'skilled'");
    expect(row).toEqual([{ SKILLS: ['good_sql'] }]);
  });

  it('renaming a skill renames it in the agents projection', async () => {
    await t.http
      .put('/api/projects/proj/skills/good_sql')
      .send({ skill: { name: 'renamed_sql' } })
      .expect(200);
    const row = await t.running.ctx.duck.query("SELECT SKILLS FROM agents WHERE NAME = 'skilled'");
    expect(row).toEqual([{ SKILLS: ['renamed_sql'] }]);
  });
});
