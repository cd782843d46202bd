/**
 * A chatbot on the built-in channel needs no database: made over SQL (`CREATE CHATBOT … USING
 * agent = '…'`) or REST without one, it records `ChatbotCreated` with no database and answers
 * messages posted to `POST …/chatbots/{c}/messages`, read back with `GET …/messages`.
 */
import { fakeReply, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, givenProject, uniqueName } from '../support/world';

const CHATBOT_TIMING = {
  CHATBOT_POLL_MS: '50',
  CHATBOT_RETRY_BASE_MS: '100',
  CHATBOT_RETRY_MAX_MS: '200',
  CHATBOT_WAIT_MS: '20000',
};

describe.each(storeKinds)('a chatbot on the built-in channel, without a database (%s)', (store) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
    t = await startTestApp(store, CHATBOT_TIMING);
  });
  afterAll(async () => {
    await t?.dispose();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  const givenAgentOnFake = async () => {
    const { name: project } = await givenProject(t);
    const agent = uniqueName('agent');
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: {
          name: agent,
          model: { provider: 'openai', model_name: 'gpt-test', api_key: 'sk-chat', base_url: fake.baseUrl },
        },
      })
      .expect(201);
    return { project, agent };
  };

  /** Sends a message and waits for the answer; asserts the chat stream's life in the log. */
  const chatsOnTheBuiltInChannel = async (project: string, bot: string, id: number) => {
    fake.setFallback((req) => fakeReply.text(`echo: ${lastUserText(req)}`));
    const base = `/api/projects/${project}/chatbots/${bot}`;
    const posted = await t.http
      .post(`${base}/messages?wait=true`)
      .send({ text: 'hello', user: 'ann', chat_id: 'c1' })
      .expect(200);
    expect(posted.body).toMatchObject({
      chat_id: 'c1',
      duplicate: false,
      answer: { text: 'echo: hello' },
      error: null,
    });
    const conversation = (await t.http.get(`${base}/messages?chat_id=c1`).expect(200)).body as {
      role: string;
      text: string;
    }[];
    expect(conversation.map((i) => [i.role, i.text])).toEqual([
      ['user', 'hello'],
      ['assistant', 'echo: hello'],
    ]);
    // The answer is given once it is recorded; its delivery is recorded just after.
    const stream = `chat-${id}-${posted.body.message_id as string}`;
    let events = await eventsOf(t, stream);
    for (let i = 0; i < 200 && !events.some((e) => e.type === 'ChatAnswerDelivered'); i++) {
      await new Promise((r) => setTimeout(r, 25));
      events = await eventsOf(t, stream);
    }
    expect(events.map((e) => e.type)).toEqual([
      'ChatMessageReceived',
      'ChatAnswerClaimed',
      'ChatAnswered',
      'ChatAnswerDelivered',
    ]);
    expect(events[0]!.data).toMatchObject({ channel: 'builtin', text: 'hello' });
  };

  it('CREATE CHATBOT USING agent only makes a running chatbot with no database, and it chats', async () => {
    const { project, agent } = await givenAgentOnFake();
    const bot = uniqueName('bot');
    const answer = await querySql(t, `CREATE CHATBOT ${project}.${bot} USING agent = '${agent}'`);
    expect(answer).toMatchObject({ type: 'ok' });

    const created = (await eventsOf(t, `project-${project}`)).filter((e) => e.type === 'ChatbotCreated');
    expect(created).toHaveLength(1);
    expect(created[0]!.data).toMatchObject({
      name: bot,
      databaseId: null,
      databaseName: null,
      isRunning: true,
    });

    const got = await t.http.get(`/api/projects/${project}/chatbots/${bot}`).expect(200);
    expect(got.body).toMatchObject({ name: bot, database_id: null, database: '?', is_running: true });
    await chatsOnTheBuiltInChannel(project, bot, got.body.id as number);
  });

  it('POST …/chatbots without database_name or database_id is 201, database_id null, and it chats', async () => {
    const { project, agent } = await givenAgentOnFake();
    const bot = uniqueName('bot');
    const res = await t.http
      .post(`/api/projects/${project}/chatbots`)
      .send({ chatbot: { name: bot, agent_name: agent, is_running: true } })
      .expect(201);
    expect(res.body).toMatchObject({ name: bot, database_id: null });

    const created = (await eventsOf(t, `project-${project}`)).filter((e) => e.type === 'ChatbotCreated');
    expect(created.map((e) => e.data)).toEqual([
      expect.objectContaining({ name: bot, databaseId: null, databaseName: null, isRunning: true }),
    ]);
    await chatsOnTheBuiltInChannel(project, bot, res.body.id as number);
  });

  it('PUT of a missing chatbot without a database creates it (201), database_id null', async () => {
    const { project, agent } = await givenAgentOnFake();
    const bot = uniqueName('bot');
    const res = await t.http
      .put(`/api/projects/${project}/chatbots/${bot}`)
      .send({ chatbot: { agent_name: agent, is_running: true } })
      .expect(201);
    expect(res.body).toMatchObject({ name: bot, database_id: null });
    const created = (await eventsOf(t, `project-${project}`)).filter((e) => e.type === 'ChatbotCreated');
    expect(created.map((e) => e.data)).toEqual([
      expect.objectContaining({ name: bot, databaseId: null, databaseName: null }),
    ]);
    await chatsOnTheBuiltInChannel(project, bot, res.body.id as number);
  });
});
