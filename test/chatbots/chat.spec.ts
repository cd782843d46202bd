/**
 * Chatbots that chat, through the built-in channel: each message recorded once, answered once by
 * the chatbot's agent (a fake OpenAI-compatible provider on a real socket) with the conversation as
 * memory, failures retried with backoff and shown in last_error, the whole life in the log.
 */
import { fakeReply, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, givenDatabase, givenProject, onFreshApp, uniqueName } from '../support/world';

type Posted = {
  message_id: string;
  chat_id: string;
  duplicate: boolean;
  status: string;
  answer: { text: string; trace_id: string | null } | null;
};

const CHATBOT_TIMING = {
  CHATBOT_POLL_MS: '50',
  CHATBOT_RETRY_BASE_MS: '100',
  CHATBOT_RETRY_MAX_MS: '200',
  CHATBOT_WAIT_MS: '20000',
};

describe.each(storeKinds)('chatbots that chat (%s)', (store) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
    t = await startTestApp(store, CHATBOT_TIMING);
  });
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  /** A project with an agent on the fake provider and a running chatbot using it. */
  const givenRunningBot = async (options: { running?: boolean; app?: TestApp } = {}) => {
    const app = options.app ?? t;
    const { name: project } = await givenProject(app);
    const agent = uniqueName('agent');
    await app.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: {
          name: agent,
          model: { provider: 'openai', model_name: 'gpt-test', api_key: 'sk-chat', base_url: fake.baseUrl },
        },
      })
      .expect(201);
    const database = await givenDatabase(app, {
      engine: 'webhook',
      parameters: { url: 'http://127.0.0.1:9/unused' },
    });
    const bot = uniqueName('bot');
    const created = await app.http
      .post(`/api/projects/${project}/chatbots`)
      .send({
        chatbot: {
          name: bot,
          agent_name: agent,
          database_name: database.name,
          is_running: options.running ?? true,
        },
      })
      .expect(201);
    return {
      project,
      agent,
      bot,
      id: created.body.id as number,
      base: `/api/projects/${project}/chatbots/${bot}`,
    };
  };

  const send = async (base: string, body: Record<string, unknown>, wait = true, app: TestApp = t) =>
    (await app.http.post(`${base}/messages${wait ? '?wait=true' : ''}`).send(body)).body as Posted;

  it('answers a message with its agent, once, and keeps the conversation in order', async () => {
    const w = await givenRunningBot();
    fake.setFallback((req) => fakeReply.text(`echo: ${lastUserText(req)}`));
    const first = await send(w.base, { text: 'hello bot', user: 'ann', chat_id: 'c1' });
    expect(first).toMatchObject({ duplicate: false, answer: { text: 'echo: hello bot' } });
    expect(['answered', 'delivered']).toContain(first.status);
    const second = await send(w.base, { text: 'and again', user: 'ann', chat_id: 'c1' });
    expect(second.answer?.text).toBe('echo: and again');

    // The second question reached the model with the first exchange as memory.
    const [, secondRequest] = fake.chatRequests();
    const texts = secondRequest!.messages.map((m) => `${m.role}:${String(m.content)}`);
    expect(texts).toEqual(
      expect.arrayContaining(['user:hello bot', 'assistant:echo: hello bot', 'user:and again']),
    );

    const conversation = (await t.http.get(`${w.base}/messages?chat_id=c1`).expect(200)).body as {
      role: string;
      text: string;
      seq: string;
    }[];
    expect(conversation.map((i) => [i.role, i.text])).toEqual([
      ['user', 'hello bot'],
      ['assistant', 'echo: hello bot'],
      ['user', 'and again'],
      ['assistant', 'echo: and again'],
    ]);
    const after = (
      await t.http.get(`${w.base}/messages?chat_id=c1&after=${conversation[1]!.seq}`).expect(200)
    ).body;
    expect(after.map((i: { text: string }) => i.text)).toEqual(['and again', 'echo: and again']);

    const stream = `chat-${w.id}-${first.message_id}`;
    expect((await eventsOf(t, stream)).map((e) => e.type)).toEqual([
      'ChatMessageReceived',
      'ChatAnswerClaimed',
      'ChatAnswered',
      'ChatAnswerDelivered',
    ]);
    const runs = await querySql(
      t,
      `SELECT VIA FROM information_schema.AGENT_RUNS WHERE TRACE_ID = '${String(first.answer?.trace_id)}'`,
    );
    expect(runs.data).toEqual([['chatbot']]);
  });

  it('records a message its client sends twice (same message_id) once, and answers it once', async () => {
    const w = await givenRunningBot();
    fake.setFallback(fakeReply.text('only once'));
    const [a, b] = await Promise.all([
      send(w.base, { text: 'hi', chat_id: 'c', message_id: 'client-1' }),
      send(w.base, { text: 'hi', chat_id: 'c', message_id: 'client-1' }),
    ]);
    expect(a!.message_id).toBe(b!.message_id);
    expect([a!.duplicate, b!.duplicate].sort()).toEqual([false, true]);
    await send(w.base, { text: 'hi', chat_id: 'c', message_id: 'client-1' });
    expect(fake.chatRequests()).toHaveLength(1);
    const answered = (await eventsOf(t, `chat-${w.id}-${a!.message_id}`)).filter(
      (e) => e.type === 'ChatAnswered',
    );
    expect(answered).toHaveLength(1);
  });

  it('takes no message while stopped (409), and answers once started', async () => {
    const w = await givenRunningBot({ running: false });
    fake.setFallback(fakeReply.text('awake'));
    const refused = await t.http.post(`${w.base}/messages`).send({ text: 'anyone?' }).expect(409);
    expect(problemOf(refused).detail).toMatch(/not running/);
    await t.http
      .put(w.base)
      .send({ chatbot: { is_running: true } })
      .expect(200);
    expect((await send(w.base, { text: 'anyone?' })).answer?.text).toBe('awake');
  });

  it('retries a failing answer with backoff, says why in last_error, and clears it when an answer comes', async () => {
    const w = await givenRunningBot();
    let calls = 0;
    fake.setFallback(() =>
      ++calls <= 2 ? fakeReply.error(401, 'key rejected for now') : fakeReply.text('back again'),
    );
    const posted = await send(w.base, { text: 'are you there?' }, false);
    const answered = await (async () => {
      for (let i = 0; i < 200; i++) {
        const conversation = (await t.http.get(`${w.base}/messages`).expect(200)).body as {
          role: string;
          text: string;
        }[];
        if (conversation.some((x) => x.role === 'assistant')) return conversation;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('never answered');
    })();
    expect(answered.at(-1)).toMatchObject({ role: 'assistant', text: 'back again' });
    const types = (await eventsOf(t, `chat-${w.id}-${posted.message_id}`)).map((e) => e.type);
    expect(types.filter((x) => x === 'ChatAnswerFailed')).toHaveLength(2);
    expect(types.filter((x) => x === 'ChatAnswered')).toHaveLength(1);
    const bot = (await t.http.get(w.base).expect(200)).body;
    expect(bot.last_error).toBeNull();
  });

  it('gives up after CHATBOT_MAX_ATTEMPTS and keeps the reason (message status, last_error)', async () => {
    const w = await givenRunningBot();
    fake.setFallback(fakeReply.error(401, 'key rejected for good'));
    const res = await t.http.post(`${w.base}/messages?wait=true`).send({ text: 'hello?' });
    expect(res.status).toBe(502);
    expect(problemOf(res).detail).toMatch(/gave up/);
    const bot = (await t.http.get(w.base).expect(200)).body;
    expect(bot.last_error).toMatch(/gave up/);
    const rows = await querySql(
      t,
      `SELECT STATUS, ATTEMPTS FROM information_schema.CHAT_MESSAGES WHERE CHATBOT = '${w.bot}'`,
    );
    expect(rows.data).toEqual([['given_up', 5]]);
  });

  it('answers the chats of one bot independently, each in order', async () => {
    const w = await givenRunningBot();
    fake.setFallback((req) => fakeReply.text(`re: ${lastUserText(req)}`, { delayMs: 20 }));
    // Each chat's messages one after another (their order is the chat's), the chats at once.
    await Promise.all(
      ['x', 'y', 'z'].map(async (chat) => {
        for (let i = 0; i < 3; i++) await send(w.base, { text: `${chat}${i}`, chat_id: chat }, false);
      }),
    );
    for (const chat of ['x', 'y', 'z']) {
      let items: { role: string; text: string }[] = [];
      for (let i = 0; i < 300 && items.filter((x) => x.role === 'assistant').length < 3; i++) {
        items = (await t.http.get(`${w.base}/messages?chat_id=${chat}`).expect(200)).body;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(items.filter((x) => x.role === 'assistant').map((x) => x.text)).toEqual(
        [0, 1, 2].map((i) => `re: ${chat}${i}`),
      );
    }
  });

  it(
    'gives the agent the last CHATBOT_MEMORY_MESSAGES messages of the chat as memory, in order, and none of another chat',
    () =>
      onFreshApp(
        store,
        async (app) => {
          // The default is 100 (the shared app's); 4 here keeps the conversation short.
          expect([t.config.chatbots.memoryMessages, app.config.chatbots.memoryMessages]).toEqual([100, 4]);
          const w = await givenRunningBot({ app });
          fake.setFallback((req) => fakeReply.text(`re: ${lastUserText(req)}`));
          // Six exchanges in chat "a", with another chat's exchanges between them.
          for (let i = 1; i <= 6; i++) {
            expect((await send(w.base, { text: `a${i}`, chat_id: 'a' }, true, app)).answer?.text).toBe(
              `re: a${i}`,
            );
            expect((await send(w.base, { text: `b${i}`, chat_id: 'b' }, true, app)).answer?.text).toBe(
              `re: b${i}`,
            );
          }
          fake.reset();
          fake.setFallback(fakeReply.text('re: a7'));
          expect((await send(w.base, { text: 'a7', chat_id: 'a' }, true, app)).answer?.text).toBe('re: a7');

          const [request] = fake.chatRequests();
          expect(fake.chatRequests()).toHaveLength(1);
          expect(
            request!.messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]),
          ).toEqual([
            ['user', 'a3'],
            ['assistant', 're: a3'],
            ['user', 'a4'],
            ['assistant', 're: a4'],
            ['user', 'a5'],
            ['assistant', 're: a5'],
            ['user', 'a6'],
            ['assistant', 're: a6'],
            ['user', 'a7'],
          ]);
          const run = await querySql(
            app,
            `SELECT QUESTION, VIA FROM information_schema.AGENT_RUNS WHERE AGENT = '${w.agent}' ORDER BY STARTED_AT DESC LIMIT 1`,
          );
          expect(run.data).toEqual([['a7', 'chatbot']]);
        },
        { ...CHATBOT_TIMING, CHATBOT_MEMORY_MESSAGES: '4' },
      ),
    // An app of its own (a fresh PostgreSQL database) and thirteen answered exchanges: past jest's
    // 30 s on a machine at load 8-12, where two runs beside other specs timed out.
    90_000,
  );

  it('streams a conversation live (SSE): the message as it is recorded, then its answer', async () => {
    const w = await givenRunningBot();
    fake.setFallback((req) => fakeReply.text(`live: ${lastUserText(req)}`, { delayMs: 300 }));
    const server = t.running.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const controller = new AbortController();
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}${w.base}/messages/stream?chat_id=live`, {
        signal: controller.signal,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      const events: Record<string, unknown>[] = [];
      let buffered = '';
      const next = async () => {
        while (!buffered.includes('\n\n')) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended after ${JSON.stringify(events)}`);
          buffered += decoder.decode(value, { stream: true });
        }
        const at = buffered.indexOf('\n\n');
        const block = buffered.slice(0, at);
        buffered = buffered.slice(at + 2);
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice('data: '.length))
          .join('\n');
        events.push(JSON.parse(data) as Record<string, unknown>);
      };

      // Another chat of the same bot is not part of this stream.
      await send(w.base, { text: 'elsewhere', chat_id: 'other' });
      const posted = await send(w.base, { text: 'are you live?', chat_id: 'live', user: 'ann' }, false);
      await next();
      expect(events[0]).toMatchObject({
        role: 'user',
        text: 'are you live?',
        user: 'ann',
        chat_id: 'live',
        message_id: posted.message_id,
        channel: 'builtin',
      });
      await next();
      expect(events[1]).toMatchObject({
        role: 'assistant',
        text: 'live: are you live?',
        chat_id: 'live',
        message_id: posted.message_id,
        trace_id: expect.any(String),
      });
      expect(BigInt(events[1]!.seq as string)).toBeGreaterThan(BigInt(events[0]!.seq as string));
      expect(events.map((e) => e.role)).toEqual(['user', 'assistant']);
    } finally {
      controller.abort();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
