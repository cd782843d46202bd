import { projectAggregate } from '../../src/projects/aggregate';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';

describe.each(storeKinds)('agents API on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
    await t.http.post('/api/projects').send({ name: 'proj' }).expect(201);
    await t.http
      .post('/api/projects/proj/skills')
      .send({ skill: { name: 'test_skill', type: 'custom', params: {} } })
      .expect(201);
    await t.http
      .post('/api/projects/proj/skills')
      .send({ skill: { name: 'sql_skill', type: 'sql', params: { database: 'db' } } })
      .expect(201);
    await t.http
      .post('/api/projects/proj/skills')
      .send({ skill: { name: 'kb_skill', type: 'retrieval', params: { source: 'kb' } } })
      .expect(201);
  });
  afterAll(() => t.dispose());

  it('creates an agent in the skills shape (model_name, provider, params, skills) and answers in that shape', async () => {
    const res = await t.http
      .post('/api/projects/proj/agents')
      .send({
        agent: {
          name: 'old_style',
          model_name: 'gpt-4o',
          provider: 'openai',
          params: { k1: 'v1', openai_api_key: 'sk-abc' },
          skills: ['test_skill', { name: 'sql_skill', tables: ['t1'] }],
        },
      })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'old_style',
      project_id: expect.any(Number),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      model_name: 'gpt-4o',
      provider: 'openai',
      skills: [
        expect.objectContaining({ name: 'test_skill', agent_ids: [res.body.id] }),
        expect.objectContaining({ name: 'sql_skill', agent_ids: [res.body.id] }),
      ],
      skills_extra_parameters: { test_skill: {}, sql_skill: { tables: ['t1'] } },
      params: { k1: 'v1', openai_api_key: '******' },
    });
    expect((await t.http.get('/api/projects/proj/agents/OLD_STYLE').expect(200)).body).toEqual(res.body);
  });

  it('creates an agent in the data shape (model, data, prompt_template) and answers in that shape, key masked', async () => {
    const res = await t.http
      .post('/api/projects/proj/agents')
      .send({
        agent: {
          name: 'TEST_post_agent',
          model: { model_name: 'gpt-3.5-turbo', provider: 'openai', api_key: 'sk-secret-999' },
          data: { tables: ['example_db.customers'] },
          prompt_template: 'example_db.customers stores customers data',
        },
      })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'TEST_post_agent',
      project_id: expect.any(Number),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      model: { model_name: 'gpt-3.5-turbo', provider: 'openai', api_key: '******' },
      data: { tables: ['example_db.customers'] },
      prompt_template: 'example_db.customers stores customers data',
    });
    const list = await t.http.get('/api/projects/proj/agents').expect(200);
    expect(JSON.stringify(list.body)).not.toContain('sk-secret-999');
    const rows = await t.running.ctx.duck.query('SELECT PARAMS FROM agents');
    expect(JSON.stringify(rows)).not.toContain('sk-secret-999');
  });

  it('answers 400, 404 and 409 with MindsDB titles', async () => {
    expect(problemOf(await t.http.post('/api/projects/proj/agents').send({}).expect(400)).detail).toMatch(
      /Must provide "agent" parameter/,
    );
    expect(
      problemOf(await t.http.post('/api/projects/proj/agents').send({ agent: {} }).expect(400)).detail,
    ).toMatch(/Missing "name" field for agent/);
    expect(
      problemOf(
        await t.http
          .post('/api/projects/nope/agents')
          .send({ agent: { name: 'x' } })
          .expect(404),
      ).title,
    ).toBe('Project not found');
    expect(
      problemOf(
        await t.http
          .post('/api/projects/proj/agents')
          .send({ agent: { name: 'old_style' } })
          .expect(409),
      ).title,
    ).toBe('Agent already exists');
    const ghost = await t.http
      .post('/api/projects/proj/agents')
      .send({ agent: { name: 'x', skills: ['ghost'] } })
      .expect(404);
    expect(problemOf(ghost)).toMatchObject({
      title: 'Resource not found',
      detail: expect.stringContaining('"ghost"'),
    });
    const model = await t.http
      .post('/api/projects/proj/agents')
      .send({ agent: { name: 'x', provider: 'mindsdb', model_name: 'no_such_model' } })
      .expect(404);
    expect(problemOf(model).detail).toMatch(/no_such_model/);
    const deprecated = await t.http
      .post('/api/projects/proj/agents')
      .send({ agent: { name: 'x', params: { database: 'd' } } })
      .expect(400);
    expect(problemOf(deprecated).detail).toMatch(/no longer supported/);
    expect(problemOf(await t.http.get('/api/projects/proj/agents/ghost').expect(404)).title).toBe(
      'Agent not found',
    );
    await t.http.get('/api/projects/proj/agents/x').expect(404);
  });

  it('PUT merges params with null removal and edits skills; never creates (400)', async () => {
    await t.http
      .post('/api/projects/proj/agents')
      .send({ agent: { name: 'editable', params: { k1: 'v1', k2: 'v2' } } })
      .expect(201);
    const updated = await t.http
      .put('/api/projects/proj/agents/editable')
      .send({
        agent: { params: { k1: 'v1.1', k2: null, k3: 'v3' }, skills_to_add: ['kb_skill', 'test_skill'] },
      })
      .expect(200);
    expect(updated.body.params).toEqual({ k1: 'v1.1', k3: 'v3', mode: 'retrieval' });
    expect(updated.body.skills.map((s: { name: string }) => s.name)).toEqual(['kb_skill', 'test_skill']);
    const removed = await t.http
      .put('/api/projects/proj/agents/editable')
      .send({ agent: { skills_to_remove: ['kb_skill'] } })
      .expect(200);
    expect(removed.body.skills.map((s: { name: string }) => s.name)).toEqual(['test_skill']);
    const both = await t.http
      .put('/api/projects/proj/agents/editable')
      .send({ agent: { skills: ['test_skill'], skills_to_add: ['kb_skill'] } })
      .expect(400);
    expect(problemOf(both).title).toBe('Wrong arguments');
    const absent = await t.http
      .put('/api/projects/proj/agents/nobody')
      .send({ agent: { params: {} } })
      .expect(400);
    expect(problemOf(absent)).toMatchObject({ title: 'Creation is not allowed' });
    await t.http.get('/api/projects/proj/agents/nobody').expect(404);
    expect(
      problemOf(
        await t.http
          .put('/api/projects/proj/agents/editable')
          .send({ agent: { name: 'old_style' } })
          .expect(409),
      ).title,
    ).toBe('Agent already exists');
  });

  it('keeps a stored key when PUT echoes the mask, and replaces it when a new one is sent', async () => {
    const got = await t.http.get('/api/projects/proj/agents/TEST_post_agent').expect(200);
    await t.http
      .put('/api/projects/proj/agents/TEST_post_agent')
      .send({ agent: { model: got.body.model } })
      .expect(200);
    const load = async () => {
      const { state } = await t.running.ctx.commands.load('project-proj', projectAggregate);
      return [...state.agents.values()].find((a) => a.name === 'TEST_post_agent')!.params;
    };
    expect(((await load()).model as { api_key: string }).api_key).toBe('sk-secret-999');
    await t.http
      .put('/api/projects/proj/agents/TEST_post_agent')
      .send({ agent: { model: { ...got.body.model, api_key: 'sk-new' } } })
      .expect(200);
    expect(((await load()).model as { api_key: string }).api_key).toBe('sk-new');
  });

  it('loses no update among 20 concurrent PUTs on one agent', async () => {
    await t.http
      .post('/api/projects/proj/agents')
      .send({ agent: { name: 'busy', params: {} } })
      .expect(201);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.http.put('/api/projects/proj/agents/busy').send({ agent: { params: { [`k${i}`]: i } } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const agent = await t.http.get('/api/projects/proj/agents/busy').expect(200);
    expect(agent.body.params).toEqual(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])));
  });

  it('checks If-Match on PUT and DELETE', async () => {
    const got = await t.http.get('/api/projects/proj/agents/busy').expect(200);
    expect(
      problemOf(
        await t.http
          .put('/api/projects/proj/agents/busy')
          .set('If-Match', '"3"')
          .send({ agent: {} })
          .expect(412),
      ).status,
    ).toBe(412);
    await t.http.delete('/api/projects/proj/agents/busy').set('If-Match', '"3"').expect(412);
    await t.http.delete('/api/projects/proj/agents/busy').set('If-Match', got.headers.etag!).expect(204);
  });

  it('deletes on both the singular (documented) and plural (MindsDB clients) paths', async () => {
    const a = await t.http.delete('/api/projects/proj/agent/editable').expect(204);
    expect(a.text).toBe('');
    await t.http.delete('/api/projects/proj/agents/old_style').expect(204);
    await t.http.get('/api/projects/proj/agents/editable').expect(404);
    await t.http.delete('/api/projects/proj/agents/old_style').expect(404);
    const skills = await t.http.get('/api/projects/proj/skills').expect(200);
    for (const s of skills.body) expect(s.agent_ids).toEqual([]);
  });
});
