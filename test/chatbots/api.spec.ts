import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { mariadbParameters, postgresParameters } from '../support/external';
import {
  eventsOf,
  givenAgent,
  givenChatbot,
  givenDatabase,
  givenProject,
  givenSkill,
  type DatabaseBody,
} from '../support/world';

const connection = postgresParameters({ password: 'chat-db-secret' });

describe.each(storeKinds)('chatbots API on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  /** A project of the test's own with agents `helper` and `other`, and a chat database of its own. */
  const givenChatWorld = async (): Promise<{ project: string; database: DatabaseBody }> => {
    const { name: project } = await givenProject(t);
    const database = await givenDatabase(t, { engine: 'postgres', parameters: connection });
    await givenAgent(t, project, { name: 'helper', model_name: 'gpt-4o', provider: 'openai' });
    await givenAgent(t, project, { name: 'other' });
    return { project, database };
  };

  /** The chatbot `bot` of agent `helper`, with a plain and a secret param. */
  const givenBot = (project: string, database: DatabaseBody, agent = 'helper') =>
    givenChatbot(t, project, {
      name: 'bot',
      agent_name: agent,
      database_name: database.name,
      params: { param1: 'value1', token: 'xoxb-1' },
    });

  const chatbotNames = async (project: string) =>
    (await t.http.get(`/api/projects/${project}/chatbots`).expect(200)).body.map(
      (b: { name: string }) => b.name,
    );

  describe('creating and reading', () => {
    it('creates a chatbot (201) and answers in the flat shape, secrets masked, with its webhook token', async () => {
      const { project, database } = await givenChatWorld();
      const res = await t.http
        .post(`/api/projects/${project}/chatbots`)
        .send({
          chatbot: {
            name: 'bot',
            agent_name: 'helper',
            database_name: database.name,
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
        webhook_token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
        created_at: expect.any(String),
        database_id: database.id,
      });
    });

    it('reads a chatbot back in the rich shape', async () => {
      const { project, database } = await givenChatWorld();
      const created = await givenBot(project, database);
      const got = await t.http.get(`/api/projects/${project}/chatbots/bot`).expect(200);
      expect(got.body).toEqual({
        id: created.id,
        name: 'bot',
        project,
        agent: expect.objectContaining({ name: 'helper', id: created.agent_id }),
        database_id: database.id,
        database: database.name,
        model_name: 'gpt-4o',
        params: { param1: 'value1', token: '******' },
        created_at: created.created_at,
        updated_at: expect.any(String),
        is_running: false,
        last_error: null,
        webhook_token: created.webhook_token,
      });
    });

    it("lists the project's chatbots in the rich shape", async () => {
      const { project, database } = await givenChatWorld();
      await givenBot(project, database);
      const got = await t.http.get(`/api/projects/${project}/chatbots/bot`).expect(200);
      expect((await t.http.get(`/api/projects/${project}/chatbots`).expect(200)).body).toEqual([got.body]);
    });

    it('creates a chatbot naming its database by id', async () => {
      const { project, database } = await givenChatWorld();
      await t.http
        .post(`/api/projects/${project}/chatbots`)
        .send({ chatbot: { name: 'by_id', agent_name: 'helper', database_id: database.id } })
        .expect(201);
    });
  });

  describe('refusals, none of which records a chatbot', () => {
    it.each([
      ['no chatbot', () => ({}), /Must provide "chatbot"/],
      [
        'a missing name',
        (db: string) => ({ chatbot: { agent_name: 'helper', database_name: db } }),
        /Missing "name"/,
      ],
      [
        'neither model nor agent',
        (db: string) => ({ chatbot: { name: 'b', database_name: db } }),
        /"model_name" or "agent_name"/,
      ],
    ])('answers 400 for %s', async (_case, body, detail) => {
      const { project, database } = await givenChatWorld();
      expect(
        problemOf(
          await t.http.post(`/api/projects/${project}/chatbots`).send(body(database.name)).expect(400),
        ).detail,
      ).toMatch(detail);
      expect(await chatbotNames(project)).toEqual([]);
    });

    it.each([
      [
        'an unknown database',
        () => ({ name: 'b', agent_name: 'helper', database_name: 'nope' }),
        'Database not found',
      ],
      [
        'an unknown agent',
        (db: string) => ({ name: 'b', agent_name: 'ghost', database_name: db }),
        'Agent not found',
      ],
      [
        'an unknown model',
        (db: string) => ({ name: 'b', model_name: 'no_model', database_name: db }),
        'Model not found',
      ],
    ])('answers 404 for %s', async (_case, chatbot, title) => {
      const { project, database } = await givenChatWorld();
      expect(
        problemOf(
          await t.http
            .post(`/api/projects/${project}/chatbots`)
            .send({ chatbot: chatbot(database.name) })
            .expect(404),
        ).title,
      ).toBe(title);
      expect(await chatbotNames(project)).toEqual([]);
    });

    it('answers 404 for an unknown project', async () => {
      await t.http
        .post('/api/projects/nope/chatbots')
        .send({ chatbot: { name: 'b' } })
        .expect(404);
    });

    it('answers 404 for an unknown chatbot', async () => {
      const { project } = await givenChatWorld();
      expect(problemOf(await t.http.get(`/api/projects/${project}/chatbots/ghost`).expect(404)).title).toBe(
        'Chatbot not found',
      );
    });

    it('answers 409 for a name that exists, leaving the chatbots as they were', async () => {
      const { project, database } = await givenChatWorld();
      await givenBot(project, database);
      await givenChatbot(t, project, { name: 'by_id', agent_name: 'helper', database_id: database.id });
      expect(
        problemOf(
          await t.http
            .post(`/api/projects/${project}/chatbots`)
            .send({ chatbot: { name: 'bot', agent_name: 'helper', database_name: database.name } })
            .expect(409),
        ).title,
      ).toBe('Chatbot already exists');
      expect(await chatbotNames(project)).toEqual(['bot', 'by_id']);
    });
  });

  describe('PUT', () => {
    it('merges params with new values winning and switches agent and state (200)', async () => {
      const { project, database } = await givenChatWorld();
      await givenBot(project, database);
      const updated = await t.http
        .put(`/api/projects/${project}/chatbots/bot`)
        .send({
          chatbot: { params: { param1: 'changed', param2: 'added' }, agent_name: 'other', is_running: true },
        })
        .expect(200);
      expect(updated.body.params).toEqual({ param1: 'changed', token: '******', param2: 'added' });
      const got = await t.http.get(`/api/projects/${project}/chatbots/bot`).expect(200);
      expect(got.body).toMatchObject({ agent: expect.objectContaining({ name: 'other' }), is_running: true });
    });

    it('creates a missing chatbot under the URL name (201)', async () => {
      const { project, database } = await givenChatWorld();
      const created = await t.http
        .put(`/api/projects/${project}/chatbots/via_put`)
        .send({ chatbot: { agent_name: 'helper', database_name: database.name } })
        .expect(201);
      expect(created.body).toMatchObject({ name: 'via_put', database_id: database.id });
    });

    it('refuses to rename a chatbot to a name that exists (409)', async () => {
      const { project, database } = await givenChatWorld();
      await givenBot(project, database);
      await givenChatbot(t, project, { name: 'via_put', agent_name: 'helper', database_name: database.name });
      await t.http
        .put(`/api/projects/${project}/chatbots/bot`)
        .send({ chatbot: { name: 'via_put' } })
        .expect(409);
    });
  });

  describe('what its references become', () => {
    it('deleting its agent leaves the chatbot with agent null, stopped, and an event that says why', async () => {
      const { project, database } = await givenChatWorld();
      await givenBot(project, database);
      await t.http
        .put(`/api/projects/${project}/chatbots/bot`)
        .send({ chatbot: { agent_name: 'other', is_running: true } })
        .expect(200);
      await t.http.delete(`/api/projects/${project}/agents/other`).expect(204);
      const got = await t.http.get(`/api/projects/${project}/chatbots/bot`).expect(200);
      expect(got.body).toMatchObject({
        agent: null,
        is_running: false,
        last_error: "agent 'other' was deleted",
      });
      const tail = (await eventsOf(t, `project-${project}`)).slice(-2);
      expect(tail.map((e) => e.type)).toEqual(['AgentDeleted', 'ChatbotStoppedAgentDeleted']);
      expect(tail[1]!.data).toMatchObject({ chatbotId: got.body.id, agentName: 'other' });
      const rows = await t.running.ctx.duck.query(
        `SELECT AGENT, IS_RUNNING, LAST_ERROR FROM chatbots WHERE NAME = 'bot' AND PROJECT = '${project}'`,
      );
      expect(rows).toEqual([{ AGENT: null, IS_RUNNING: false, LAST_ERROR: "agent 'other' was deleted" }]);
    });

    it('shows "?" for a chat database that was deleted', async () => {
      const { project, database } = await givenChatWorld();
      await givenChatbot(t, project, { name: 'by_id', agent_name: 'helper', database_id: database.id });
      const temporary = await givenDatabase(t, { engine: 'mysql', parameters: mariadbParameters() });
      await t.http
        .put(`/api/projects/${project}/chatbots/by_id`)
        .send({ chatbot: { database_name: temporary.name } })
        .expect(200);
      await t.http.delete(`/api/databases/${temporary.name}`).expect(204);
      expect((await t.http.get(`/api/projects/${project}/chatbots/by_id`).expect(200)).body).toMatchObject({
        database: '?',
        database_id: null,
      });
    });

    it('deletes a chatbot (204, empty); it is 404 afterwards', async () => {
      const { project, database } = await givenChatWorld();
      await givenChatbot(t, project, { name: 'by_id', agent_name: 'helper', database_id: database.id });
      const res = await t.http.delete(`/api/projects/${project}/chatbots/by_id`).expect(204);
      expect(res.text).toBe('');
      await t.http.get(`/api/projects/${project}/chatbots/by_id`).expect(404);
    });
  });

  describe('deleting the project', () => {
    /** A project holding two chatbots of one agent, and one skill. */
    const givenFullProject = async () => {
      const { name: project } = await givenProject(t);
      const database = await givenDatabase(t, { engine: 'postgres', parameters: connection });
      await givenAgent(t, project, { name: 'helper', model_name: 'gpt-4o', provider: 'openai' });
      await givenBot(project, database);
      await givenChatbot(t, project, { name: 'via_put', agent_name: 'helper', database_name: database.name });
      await givenSkill(t, project, { name: 's', type: 'x', params: {} });
      return project;
    };

    it('deletes its chatbots, agents and skills, each an event, then the project', async () => {
      const project = await givenFullProject();
      await t.http.delete(`/api/projects/${project}`).expect(204);
      const types = (await eventsOf(t, `project-${project}`)).slice(-5).map((e) => e.type);
      expect(types).toEqual([
        'ChatbotDeleted',
        'ChatbotDeleted',
        'AgentDeleted',
        'SkillDeleted',
        'ProjectDeleted',
      ]);
    });

    it('removes its rows from the skills, agents and chatbots tables', async () => {
      const project = await givenFullProject();
      const rowsOf = (table: string) =>
        t.running.ctx.duck.query(`SELECT * FROM ${table} WHERE PROJECT = '${project}'`);
      for (const table of ['skills', 'agents', 'chatbots']) expect(await rowsOf(table)).not.toEqual([]);
      await t.http.delete(`/api/projects/${project}`).expect(204);
      for (const table of ['skills', 'agents', 'chatbots']) expect(await rowsOf(table)).toEqual([]);
    });

    it('lets a project of that name be created again, empty', async () => {
      const project = await givenFullProject();
      await t.http.delete(`/api/projects/${project}`).expect(204);
      await t.http.post('/api/projects').send({ name: project }).expect(201);
      expect((await t.http.get(`/api/projects/${project}/agents`).expect(200)).body).toEqual([]);
    });
  });
});
