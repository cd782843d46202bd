import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { mariadbParameters, postgresParameters } from '../support/external';

const connection = postgresParameters({ password: 'chat-db-secret' });

describe.each(storeKinds)('chatbots API on %s', (store) => {
  let t: TestApp;
  let databaseId: number;
  beforeAll(async () => {
    t = await startTestApp(store);
    await t.http.post('/api/projects').send({ name: 'proj' }).expect(201);
    databaseId = (
      await t.http
        .post('/api/databases')
        .send({ database: { name: 'chat_db', engine: 'postgres', parameters: connection } })
        .expect(201)
    ).body.id;
    await t.http
      .post('/api/projects/proj/agents')
      .send({ agent: { name: 'helper', model_name: 'gpt-4o', provider: 'openai' } })
      .expect(201);
    await t.http
      .post('/api/projects/proj/agents')
      .send({ agent: { name: 'other' } })
      .expect(201);
  });
  afterAll(() => t.dispose());

  it('creates a chatbot (201, flat shape) and reads it back in the rich shape', async () => {
    const res = await t.http
      .post('/api/projects/proj/chatbots')
      .send({
        chatbot: {
          name: 'bot',
          agent_name: 'helper',
          database_name: 'chat_db',
          params: { param1: 'value1', token: 'xoxb-1' },
        },
      })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'bot',
      project_id: expect.any(Number),
      agent_id: expect.any(Number),
      model_name: 'gpt-4o',
      params: { param1: 'value1', token: '******' },
      webhook_token: null,
      created_at: expect.any(String),
      database_id: databaseId,
    });
    const got = await t.http.get('/api/projects/proj/chatbots/bot').expect(200);
    expect(got.body).toEqual({
      id: res.body.id,
      name: 'bot',
      project: 'proj',
      agent: expect.objectContaining({ name: 'helper', id: res.body.agent_id }),
      database_id: databaseId,
      database: 'chat_db',
      model_name: 'gpt-4o',
      params: { param1: 'value1', token: '******' },
      created_at: res.body.created_at,
      updated_at: expect.any(String),
      is_running: false,
      last_error: null,
      webhook_token: null,
    });
    expect((await t.http.get('/api/projects/proj/chatbots').expect(200)).body).toEqual([got.body]);
    await t.http
      .post('/api/projects/proj/chatbots')
      .send({ chatbot: { name: 'by_id', agent_name: 'helper', database_id: databaseId } })
      .expect(201);
  });

  it('answers 400 for missing fields, 404 for unknown references, 409 for duplicates', async () => {
    const post = (chatbot: unknown) => t.http.post('/api/projects/proj/chatbots').send({ chatbot });
    expect(problemOf(await t.http.post('/api/projects/proj/chatbots').send({}).expect(400)).detail).toMatch(
      /Must provide "chatbot"/,
    );
    expect(
      problemOf(await post({ agent_name: 'helper', database_name: 'chat_db' }).expect(400)).detail,
    ).toMatch(/Missing "name"/);
    expect(problemOf(await post({ name: 'b', database_name: 'chat_db' }).expect(400)).detail).toMatch(
      /"model_name" or "agent_name"/,
    );
    expect(problemOf(await post({ name: 'b', agent_name: 'helper' }).expect(400)).detail).toMatch(
      /database_id/,
    );
    expect(
      problemOf(await post({ name: 'b', agent_name: 'helper', database_name: 'nope' }).expect(404)).title,
    ).toBe('Database not found');
    expect(
      problemOf(await post({ name: 'b', agent_name: 'ghost', database_name: 'chat_db' }).expect(404)).title,
    ).toBe('Agent not found');
    expect(
      problemOf(await post({ name: 'b', model_name: 'no_model', database_name: 'chat_db' }).expect(404))
        .title,
    ).toBe('Model not found');
    expect(
      problemOf(await post({ name: 'bot', agent_name: 'helper', database_name: 'chat_db' }).expect(409))
        .title,
    ).toBe('Chatbot already exists');
    await t.http
      .post('/api/projects/nope/chatbots')
      .send({ chatbot: { name: 'b' } })
      .expect(404);
    expect(problemOf(await t.http.get('/api/projects/proj/chatbots/ghost').expect(404)).title).toBe(
      'Chatbot not found',
    );
    const list = (await t.http.get('/api/projects/proj/chatbots').expect(200)).body.map(
      (b: { name: string }) => b.name,
    );
    expect(list).toEqual(['bot', 'by_id']);
  });

  it('PUT merges params with new values winning and can switch agent and state (200); creates when missing (201)', async () => {
    const updated = await t.http
      .put('/api/projects/proj/chatbots/bot')
      .send({
        chatbot: { params: { param1: 'changed', param2: 'added' }, agent_name: 'other', is_running: true },
      })
      .expect(200);
    expect(updated.body.params).toEqual({ param1: 'changed', token: '******', param2: 'added' });
    const got = await t.http.get('/api/projects/proj/chatbots/bot').expect(200);
    expect(got.body).toMatchObject({ agent: expect.objectContaining({ name: 'other' }), is_running: true });
    const created = await t.http
      .put('/api/projects/proj/chatbots/via_put')
      .send({ chatbot: { agent_name: 'helper', database_name: 'chat_db' } })
      .expect(201);
    expect(created.body).toMatchObject({ name: 'via_put', database_id: databaseId });
    await t.http
      .put('/api/projects/proj/chatbots/bot')
      .send({ chatbot: { name: 'via_put' } })
      .expect(409);
  });

  it('deleting its agent leaves the chatbot with agent null, stopped, and an event that says why', async () => {
    await t.http.delete('/api/projects/proj/agents/other').expect(204);
    const got = await t.http.get('/api/projects/proj/chatbots/bot').expect(200);
    expect(got.body).toMatchObject({
      agent: null,
      is_running: false,
      last_error: "agent 'other' was deleted",
    });
    const events = (await t.http.get('/api/events?stream=project-proj&limit=1000').expect(200)).body.events;
    const tail = events.slice(-2);
    expect(tail.map((e: { type: string }) => e.type)).toEqual(['AgentDeleted', 'ChatbotStoppedAgentDeleted']);
    expect(tail[1].data).toMatchObject({ chatbotId: got.body.id, agentName: 'other' });
    const rows = await t.running.ctx.duck.query(
      "SELECT AGENT, IS_RUNNING, LAST_ERROR FROM chatbots WHERE NAME = 'bot'",
    );
    expect(rows).toEqual([{ AGENT: null, IS_RUNNING: false, LAST_ERROR: "agent 'other' was deleted" }]);
  });

  it('shows "?" for a chat database that was deleted, and deletes chatbots (204)', async () => {
    await t.http
      .post('/api/databases')
      .send({ database: { name: 'temp_chat', engine: 'mysql', parameters: mariadbParameters() } })
      .expect(201);
    await t.http
      .put('/api/projects/proj/chatbots/by_id')
      .send({ chatbot: { database_name: 'temp_chat' } })
      .expect(200);
    await t.http.delete('/api/databases/temp_chat').expect(204);
    expect((await t.http.get('/api/projects/proj/chatbots/by_id').expect(200)).body).toMatchObject({
      database: '?',
      database_id: null,
    });
    const res = await t.http.delete('/api/projects/proj/chatbots/by_id').expect(204);
    expect(res.text).toBe('');
    await t.http.get('/api/projects/proj/chatbots/by_id').expect(404);
  });

  it('deleting the project removes its chatbots, agents and skills, each an event, then the project', async () => {
    await t.http
      .post('/api/projects/proj/skills')
      .send({ skill: { name: 's', type: 'x', params: {} } })
      .expect(201);
    await t.http.delete('/api/projects/proj').expect(204);
    const events = (await t.http.get('/api/events?stream=project-proj&limit=1000').expect(200)).body.events;
    const types = events.slice(-5).map((e: { type: string }) => e.type);
    expect(types).toEqual([
      'ChatbotDeleted',
      'ChatbotDeleted',
      'AgentDeleted',
      'SkillDeleted',
      'ProjectDeleted',
    ]);
    for (const table of ['skills', 'agents', 'chatbots'])
      expect(await t.running.ctx.duck.query(`SELECT * FROM ${table} WHERE PROJECT = 'proj'`)).toEqual([]);
    await t.http.post('/api/projects').send({ name: 'proj' }).expect(201);
    expect((await t.http.get('/api/projects/proj/agents').expect(200)).body).toEqual([]);
  });
});
