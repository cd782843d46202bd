/**
 * Agents that answer: completions over a fake OpenAI-compatible provider (a real socket, the real
 * `openai` client), the SQL tools over our own engine, every run recorded on its own stream.
 */
import {
  fakeReply,
  latestToolResults,
  lastUserText,
  startFakeOpenAi,
  type FakeOpenAi,
} from '../support/fakeOpenAi';
import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { until } from '../support/until';

let counter = 0;
const unique = (prefix: string) => `${prefix}_${process.pid}_${++counter}`;

type World = { project: string; agent: string; fake: FakeOpenAi; key: string };

/** A project with one agent whose model is served by its own fake provider. */
const givenAgent = async (
  t: TestApp,
  options: { skills?: string[]; params?: Record<string, unknown>; data?: Record<string, unknown> } = {},
): Promise<World> => {
  const fake = await startFakeOpenAi();
  const project = unique('p');
  const agent = unique('a');
  const key = `sk-agent-${unique('key')}`;
  await t.http.post('/api/projects').send({ name: project }).expect(201);
  await t.http
    .post(`/api/projects/${project}/agents`)
    .send({
      agent: {
        name: agent,
        model: { model_name: 'gpt-test', provider: 'openai', api_key: key, base_url: fake.baseUrl },
        ...(options.data ? { data: options.data } : {}),
        ...(options.params ? { params: options.params } : {}),
        ...(options.skills ? { skills: options.skills } : {}),
      },
    })
    .expect(201);
  return { project, agent, fake, key };
};

const ask = (t: TestApp, w: World, body: object) =>
  t.http.post(`/api/projects/${w.project}/agents/${w.agent}/completions`).send(body);

/** A file of orders, and a sql skill that may read it (and only it). */
const givenOrders = async (t: TestApp, project: string) => {
  const file = unique('orders');
  await t.http
    .put(`/api/files/${file}`)
    .attach('file', Buffer.from('id,customer,amount\n1,alice,10.5\n2,bob,3\n3,alice,7.25\n'), `${file}.csv`)
    .expect(200);
  const skill = unique('s');
  await t.http
    .post(`/api/projects/${project}/skills`)
    .send({
      skill: {
        name: skill,
        type: 'sql',
        params: { database: 'files', tables: [file], description: 'orders' },
      },
    })
    .expect(201);
  return { file, skill };
};

/** The world's agent, given the orders skill. */
const givenAgentReadingOrders = async (t: TestApp, w: World) => {
  const orders = await givenOrders(t, w.project);
  await t.http
    .put(`/api/projects/${w.project}/agents/${w.agent}`)
    .send({ agent: { skills_to_add: [orders.skill] } })
    .expect(200);
  return orders;
};

/** Polls information_schema.AGENT_RUNS until the run is answered there (at most 10 s). */
const runAnsweredInSql = async (t: TestApp, traceId: string) => {
  for (let i = 0; i < 200; i++) {
    const status = await querySql(t, 'SELECT STATUS FROM information_schema.AGENT_RUNS WHERE TRACE_ID = :t', {
      params: { t: traceId },
    });
    if (status.data?.[0]?.[0] === 'answered') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${traceId} never showed as answered in information_schema.AGENT_RUNS`);
};

const eventsOf = async (t: TestApp, stream: string) =>
  (
    (await t.http.get(`/api/events?stream=${stream}&limit=1000`).expect(200)).body as {
      events: { type: string; data: Record<string, unknown> }[];
    }
  ).events;

/**
 * One SQLite app for the describes that need no setting of their own (each test makes its own
 * project, agent and provider, named apart), started by the first and disposed after the last.
 */
let sqliteApp: Promise<TestApp> | undefined;
const sharedSqliteApp = () => (sqliteApp ??= startTestApp('sqlite'));
afterAll(async () => {
  await (await sqliteApp)?.dispose();
});
/** The shared app for SQLite, an app of its own for another store. */
const appOf = (store: (typeof storeKinds)[number]) =>
  store === 'sqlite' ? sharedSqliteApp() : startTestApp(store);

describe.each(storeKinds)('agent completions (%s)', (store) => {
  let t: TestApp;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    t = await appOf(store);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    if (store !== 'sqlite') await t.dispose();
  });
  const world = async (options?: Parameters<typeof givenAgent>[1]) => {
    const w = await givenAgent(t, options);
    fakes.push(w.fake);
    return w;
  };

  it('answers a question with the agent’s own model and key, and records the run step by step', async () => {
    const w = await world();
    w.fake.enqueue(fakeReply.text('Hello from the model'));
    const res = await ask(t, w, { messages: [{ question: 'hi there', answer: null }] }).expect(200);
    expect(res.body).toEqual({
      message: { content: 'Hello from the model', role: 'assistant', trace_id: expect.any(String) },
    });
    const [request] = w.fake.requests().filter((r) => r.path === '/v1/chat/completions');
    expect(request!.headers.authorization).toBe(`Bearer ${w.key}`);
    expect((request!.body as { model: string }).model).toBe('gpt-test');
    expect(lastUserText(w.fake.chatRequests()[0]!)).toBe('hi there');

    const traceId = res.body.message.trace_id as string;
    const events = await eventsOf(t, `agent-run-${traceId}`);
    expect(events.map((e) => e.type)).toEqual(['AgentRunStarted', 'AgentRunModelCalled', 'AgentRunAnswered']);
    expect(events[0]!.data).toMatchObject({
      agent: w.agent,
      question: 'hi there',
      via: 'rest',
      llm: { provider: 'openai', model: 'gpt-test', keyProvided: true },
    });
    expect(JSON.stringify(events)).not.toContain(w.key);

    const run = await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/runs/${traceId}`).expect(200);
    expect(run.body).toMatchObject({
      trace_id: traceId,
      question: 'hi there',
      answer: 'Hello from the model',
      status: 'answered',
      steps: [expect.objectContaining({ kind: 'model', name: 'gpt-test', ok: true })],
    });
    const listed = await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/runs`).expect(200);
    expect(listed.body.map((r: { trace_id: string }) => r.trace_id)).toEqual([traceId]);
    const sql = await querySql(
      t,
      'SELECT ANSWER, STATUS FROM information_schema.agent_runs WHERE TRACE_ID = :t',
      {
        params: { t: traceId },
      },
    );
    expect(sql.data).toEqual([['Hello from the model', 'answered']]);
  });

  it('answers from data through its sql skill: lists, reads the schema, queries, and says which SQL ran', async () => {
    const w = await world();
    const { file } = await givenAgentReadingOrders(t, w);
    const query = `SELECT count(*) AS n, sum(amount) AS total FROM files.${file} WHERE customer = 'alice'`;
    w.fake.conversation([
      fakeReply.toolCall('sql_db_list_tables', {}),
      fakeReply.toolCall('sql_db_schema', { tables: [`files.${file}`] }),
      fakeReply.toolCall('sql_db_query', { query }),
      fakeReply.text('Alice placed 2 orders worth 17.75.'),
    ]);
    const res = await ask(t, w, {
      messages: [{ role: 'user', content: 'How much did alice order?' }],
    }).expect(200);
    expect(res.body.message).toMatchObject({ content: 'Alice placed 2 orders worth 17.75.', sql: [query] });

    const bodies = w.fake.chatRequests();
    expect(bodies[0]!.tools!.map((tool) => tool.function.name).sort()).toEqual([
      'sql_db_list_tables',
      'sql_db_query',
      'sql_db_schema',
    ]);
    expect(latestToolResults(bodies[1]!)[0]!.content).toContain(file);
    expect(latestToolResults(bodies[2]!)[0]!.content).toMatch(/customer/);
    const result = latestToolResults(bodies[3]!)[0]!.content;
    expect(result).toMatch(/\b2\b/);
    expect(result).toContain('17.75');

    const run = await t.http
      .get(`/api/projects/${w.project}/agents/${w.agent}/runs/${res.body.message.trace_id}`)
      .expect(200);
    const tools = (
      run.body.steps as { kind: string; name: string; sql: string | null; rows: number | null }[]
    ).filter((s) => s.kind === 'tool');
    expect(tools.map((s) => s.name)).toEqual(['sql_db_list_tables', 'sql_db_schema', 'sql_db_query']);
    expect(tools[2]).toMatchObject({ sql: query, rows: 1 });
  });

  it('refuses writes and tables outside the skill on the parse tree, and the model corrects itself', async () => {
    const w = await world();
    const { file } = await givenAgentReadingOrders(t, w);
    w.fake.conversation([
      fakeReply.toolCall('sql_db_query', { query: `DELETE FROM files.${file}` }),
      fakeReply.toolCall('sql_db_query', { query: 'SELECT * FROM information_schema.databases' }),
      fakeReply.toolCall('sql_db_query', { query: `SELECT count(*) AS n FROM files.${file}` }),
      fakeReply.text('There are 3 orders.'),
    ]);
    const res = await ask(t, w, { messages: [{ question: 'How many orders?' }] });
    expect([res.status, res.body.message?.content ?? res.text]).toEqual([200, 'There are 3 orders.']);
    const bodies = w.fake.chatRequests();
    expect(latestToolResults(bodies[1]!)[0]!.content).toMatch(/Only SELECT queries can run here/);
    expect(latestToolResults(bodies[2]!)[0]!.content).toMatch(
      new RegExp(
        `information_schema\\.databases is not available to this skill\\. Available: files\\.${file}`,
      ),
    );
    const run = await t.http
      .get(`/api/projects/${w.project}/agents/${w.agent}/runs/${res.body.message.trace_id}`)
      .expect(200);
    expect(
      (run.body.steps as { kind: string; ok: boolean; rejected: boolean }[])
        .filter((s) => s.kind === 'tool')
        .map((s) => [s.ok, s.rejected]),
    ).toEqual([
      [false, true],
      [false, true],
      [true, false],
    ]);

    // A table reached through a lateral join, a CTE or a subquery is found on the parse tree too.
    for (const sneaky of [
      `SELECT * FROM (SELECT 1) AS x, LATERAL (SELECT * FROM ${w.project}.agents) AS y`,
      `WITH z AS (SELECT * FROM ${w.project}.skills) SELECT * FROM z`,
      `SELECT (SELECT count(*) FROM files.${file}) + (SELECT count(*) FROM information_schema.agent_runs)`,
    ]) {
      w.fake.conversation([fakeReply.toolCall('sql_db_query', { query: sneaky }), fakeReply.text('done')]);
      const again = await ask(t, w, { messages: [{ question: 'peek' }] }).expect(200);
      const last = w.fake.chatRequests().at(-1)!;
      expect(latestToolResults(last)[0]!.content).toMatch(/is not available to this skill/);
      expect(again.body.message.sql).toBeUndefined();
    }
  });

  it('sends the conversation as memory, in both MindsDB message shapes', async () => {
    const w = await world();
    w.fake.setFallback(fakeReply.text('ok'));
    await ask(t, w, {
      messages: [
        { question: 'Who is alice?', answer: 'A customer.' },
        { question: 'What did she buy?', answer: null },
      ],
    }).expect(200);
    await ask(t, w, {
      messages: [
        { role: 'user', content: 'Who is bob?' },
        { role: 'assistant', content: 'Another customer.' },
        { role: 'user', content: 'And him?' },
      ],
    }).expect(200);
    const conversations = w.fake
      .chatRequests()
      .map((b) => b.messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]));
    expect(conversations).toEqual([
      [
        ['user', 'Who is alice?'],
        ['assistant', 'A customer.'],
        ['user', 'What did she buy?'],
      ],
      [
        ['user', 'Who is bob?'],
        ['assistant', 'Another customer.'],
        ['user', 'And him?'],
      ],
    ]);
  });

  it('keeps a conversation server-side with thread_id: the client sends only the new question', async () => {
    const w = await world();
    w.fake.enqueue(fakeReply.text('Paris.'), fakeReply.text('About 2.1 million.'));
    await ask(t, w, { messages: [{ question: 'Capital of France?' }], thread_id: 'trip-1' }).expect(200);
    await ask(t, w, { messages: [{ question: 'How many live there?' }], thread_id: 'trip-1' }).expect(200);
    const second = w.fake.chatRequests()[1]!.messages.filter((m) => m.role !== 'system');
    expect(second.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Capital of France?'],
      ['assistant', 'Paris.'],
      ['user', 'How many live there?'],
    ]);
  });

  it('streams MindsDB chunks in order: start, actions, steps, output, sql, end', async () => {
    const w = await world();
    const { file } = await givenAgentReadingOrders(t, w);
    const query = `SELECT count(*) AS n FROM files.${file}`;
    w.fake.conversation([
      fakeReply.toolCall('sql_db_query', { query }),
      fakeReply.text('Three orders in all.'),
    ]);
    const res = await t.http
      .post(`/api/projects/${w.project}/agents/${w.agent}/completions/stream`)
      .send({ messages: [{ question: 'How many orders?' }] })
      .expect(200)
      .expect('Content-Type', /text\/event-stream/);
    const chunks = res.text
      .split('\n\n')
      .filter((block) => block.startsWith('data: '))
      .map((block) => JSON.parse(block.slice(6)) as Record<string, unknown>);
    const kinds = chunks.map(
      (c) => (c.type as string) ?? (c.actions ? 'actions' : c.steps ? 'steps' : 'output'),
    );
    expect(kinds[0]).toBe('start');
    expect(kinds.indexOf('actions')).toBeLessThan(kinds.indexOf('steps'));
    expect(kinds.indexOf('steps')).toBeLessThan(kinds.indexOf('output'));
    expect(kinds.slice(-2)).toEqual(['sql', 'end']);
    expect(
      chunks
        .filter((c) => c.output !== undefined)
        .map((c) => c.output)
        .join(''),
    ).toBe('Three orders in all.');
    expect(chunks.find((c) => c.type === 'sql')).toMatchObject({ content: query });
    expect(chunks[0]).toMatchObject({ prompt: 'How many orders?', trace_id: expect.any(String) });
  });

  it('shows a run in SQL: its model and tool calls in AGENT_STEPS, its answer in AGENT_RUNS and EVENTS, never the key', async () => {
    const w = await world();
    const { file } = await givenAgentReadingOrders(t, w);
    const query = `SELECT customer, sum(amount) AS total FROM files.${file} GROUP BY customer ORDER BY customer`;
    const answer = `Alice ordered 17.75 and bob 3 (${unique('run')}).`;
    w.fake.conversation([fakeReply.toolCall('sql_db_query', { query }), fakeReply.text(answer)]);
    const res = await ask(t, w, { messages: [{ question: 'Who ordered how much?' }] }).expect(200);
    const traceId = res.body.message.trace_id as string;
    // A REST completion answers once its run is on the log, not once the read model has it
    // (src/agentRuns/service.ts, `recorded`): SQL sees the run a moment later.
    await runAnsweredInSql(t, traceId);

    const steps = await querySql(
      t,
      'SELECT STEP, KIND, NAME, OK, SQL, ROW_COUNT, REJECTED FROM information_schema.AGENT_STEPS WHERE TRACE_ID = :t ORDER BY SEQ',
      { params: { t: traceId } },
    );
    expect(steps.data).toEqual([
      [1, 'model', 'gpt-test', true, null, null, false],
      [1, 'tool', 'sql_db_query', true, query, 2, false],
      [2, 'model', 'gpt-test', true, null, null, false],
    ]);

    const runs = await querySql(
      t,
      'SELECT AGENT, QUESTION, ANSWER, STATUS, STEPS, SQL, PROVIDER, MODEL, VIA FROM information_schema.AGENT_RUNS WHERE TRACE_ID = :t',
      { params: { t: traceId } },
    );
    expect(runs.data).toEqual([
      [w.agent, 'Who ordered how much?', answer, 'answered', 2, [query], 'openai', 'gpt-test', 'rest'],
    ]);

    const events = await querySql(
      t,
      'SELECT STREAM, TYPE FROM information_schema.EVENTS WHERE DATA LIKE :a ORDER BY GLOBAL_POSITION',
      { params: { a: `%${answer}%` } },
    );
    expect(events.data).toEqual([
      [`agent-run-${traceId}`, 'AgentRunModelCalled'],
      [`agent-run-${traceId}`, 'AgentRunAnswered'],
    ]);

    // The key was sent to the provider, and is in the log (the run needs it) …
    expect(w.fake.requests()[0]!.headers.authorization).toBe(`Bearer ${w.key}`);
    // … but no SQL answer shows it: the agent's own event reads masked.
    const agentEvents = await querySql(
      t,
      "SELECT DATA FROM information_schema.EVENTS WHERE STREAM = :s AND TYPE = 'AgentCreated'",
      { params: { s: `project-${w.project}` } },
    );
    expect(JSON.parse(String(agentEvents.data![0]![0]))).toMatchObject({
      params: { model: { api_key: '******' } },
    });
    const everything = await Promise.all([
      querySql(t, 'SELECT * FROM information_schema.AGENT_STEPS WHERE TRACE_ID = :t', {
        params: { t: traceId },
      }),
      querySql(t, 'SELECT * FROM information_schema.AGENT_RUNS WHERE TRACE_ID = :t', {
        params: { t: traceId },
      }),
      querySql(t, 'SELECT * FROM information_schema.EVENTS WHERE STREAM IN (:r, :p)', {
        params: { r: `agent-run-${traceId}`, p: `project-${w.project}` },
      }),
    ]);
    expect(everything.map((a) => a.type)).toEqual(['table', 'table', 'table']);
    expect(everything[2]!.data!.length).toBeGreaterThan(4);
    expect(JSON.stringify(everything)).not.toContain(w.key);
  });

  it('refuses an agent whose provider it does not know: 400 naming the supported ones, nothing asked, no run', async () => {
    const w = await world();
    await t.http
      .put(`/api/projects/${w.project}/agents/${w.agent}`)
      .send({
        agent: {
          model: { model_name: 'gpt-test', provider: 'nosuchai', api_key: w.key, base_url: w.fake.baseUrl },
        },
      })
      .expect(200);
    // GET …/runs catches the read model up with the log first, so the head read after it is the log's.
    const lastPosition = async () => {
      await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/runs`).expect(200);
      return (await querySql(t, 'SELECT max(GLOBAL_POSITION) FROM information_schema.EVENTS')).data![0]![0];
    };
    const before = await lastPosition();

    const res = await ask(t, w, { messages: [{ question: 'hi' }] }).expect(400);
    expect(problemOf(res)).toMatchObject({
      status: 400,
      title: 'Invalid LLM settings',
      detail:
        "LLM provider 'nosuchai' is not supported; supported providers: openai, openai_compatible, azure_openai, vllm, ollama, litellm, lmstudio, anthropic, google (or the name of an ML engine created FROM one of them)",
    });
    expect(res.text).not.toContain(w.key);
    expect(w.fake.requests()).toEqual([]);
    expect(await lastPosition()).toEqual(before);
    const runs = await querySql(t, 'SELECT TRACE_ID FROM information_schema.AGENT_RUNS WHERE PROJECT = :p', {
      params: { p: w.project },
    });
    expect(runs.data).toEqual([]);
    expect((await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/runs`).expect(200)).body).toEqual(
      [],
    );
  });
});

describe('agent completions: what goes wrong, and says so', () => {
  let t: TestApp;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    t = await sharedSqliteApp();
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
  });
  const world = async (options?: Parameters<typeof givenAgent>[1]) => {
    const w = await givenAgent(t, options);
    fakes.push(w.fake);
    return w;
  };

  it('refuses a request without messages (400) and unknown projects and agents (404)', async () => {
    const w = await world();
    expect(problemOf(await ask(t, w, {}).expect(400)).detail).toMatch(/body\.messages: Missing "messages"/);
    expect(problemOf(await ask(t, w, { messages: [] }).expect(400)).detail).toMatch(/messages is empty/);
    await t.http
      .post(`/api/projects/${w.project}/agents/ghost/completions`)
      .send({ messages: [{ question: 'x' }] })
      .expect(404);
    await t.http
      .post(`/api/projects/nope_${counter}/agents/${w.agent}/completions`)
      .send({ messages: [] })
      .expect(404);
    expect(w.fake.requests()).toEqual([]);
  });

  it('a rejected key is a 502 that says so, names the run, and never shows the key', async () => {
    const w = await world();
    w.fake.enqueue(fakeReply.invalidKey(w.key));
    const res = await ask(t, w, { messages: [{ question: 'hi' }] }).expect(502);
    const problem = problemOf(res);
    expect(problem.title).toBe('LLM provider rejected the API key');
    expect(problem.detail).toMatch(/trace_id [0-9a-f-]{36}/);
    expect(res.text).not.toContain(w.key);
    const traceId = /trace_id ([0-9a-f-]{36})/.exec(problem.detail)![1]!;
    const run = await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/runs/${traceId}`).expect(200);
    expect(run.body).toMatchObject({ status: 'failed', error: { kind: 'authentication' } });
  });

  it('an unreachable provider is a 502 and a provider too slow is a 504, never a 500', async () => {
    const closed = await startFakeOpenAi();
    const deadUrl = closed.baseUrl;
    await closed.close();
    const w = await world();
    await t.http
      .put(`/api/projects/${w.project}/agents/${w.agent}`)
      .send({
        agent: { model: { model_name: 'gpt-test', provider: 'openai', api_key: w.key, base_url: deadUrl } },
      })
      .expect(200);
    expect(problemOf(await ask(t, w, { messages: [{ question: 'hi' }] }).expect(502)).title).toBe(
      'LLM provider unreachable',
    );
    const slow = await world({ params: { timeout_ms: 300 } });
    slow.fake.enqueue(fakeReply.hang());
    expect(problemOf(await ask(t, slow, { messages: [{ question: 'hi' }] }).expect(504)).title).toBe(
      'Agent timed out',
    );
  });

  it('a stream reports a failure in-band: an error chunk with MindsDB’s error_type, then end', async () => {
    const w = await world();
    w.fake.enqueue(fakeReply.invalidKey(w.key));
    const res = await t.http
      .post(`/api/projects/${w.project}/agents/${w.agent}/completions/stream`)
      .send({ messages: [{ question: 'hi' }] })
      .expect(200);
    const chunks = res.text
      .split('\n\n')
      .filter((b) => b.startsWith('data: '))
      .map((b) => JSON.parse(b.slice(6)) as Record<string, unknown>);
    expect(chunks.map((c) => c.type)).toEqual(['start', 'error']);
    expect(chunks[1]).toMatchObject({ error_type: 'authentication' });
    expect(res.text).not.toContain(w.key);
  });

  it('a client that disconnects from a stream cancels its run, recorded as aborted', async () => {
    const w = await world();
    w.fake.enqueue(fakeReply.hang());
    const server = t.running.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as { port: number };
      const controller = new AbortController();
      const res = await fetch(
        `http://127.0.0.1:${port}/api/projects/${w.project}/agents/${w.agent}/completions/stream`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ messages: [{ question: 'never mind' }] }),
          signal: controller.signal,
        },
      );
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      const traceId = (JSON.parse(first.replace(/^data: /, '').trim()) as { trace_id: string }).trace_id;
      // The model is being asked (the fake holds the request) when the client goes.
      while (w.fake.chatRequests().length === 0) await new Promise((r) => setTimeout(r, 10));
      controller.abort();
      let run: { status: string; error: { kind: string } | null } | undefined;
      for (let i = 0; i < 200 && run?.status !== 'failed'; i++) {
        await new Promise((r) => setTimeout(r, 25));
        const got = await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/runs/${traceId}`);
        if (got.status === 200) run = got.body;
      }
      expect(run).toMatchObject({ status: 'failed', error: { kind: 'aborted' } });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('uses an ML engine an agent names: the engine’s key reaches the provider, readers see it masked', async () => {
    const fake = await startFakeOpenAi();
    fakes.push(fake);
    const engine = unique('llm');
    const engineKey = `sk-engine-${unique('k')}`;
    const created = await querySql(
      t,
      `CREATE ML_ENGINE ${engine} FROM openai USING api_key = '${engineKey}', base_url = '${fake.baseUrl}'`,
    );
    expect(created.type).toBe('ok');
    const shown = await querySql(t, `SHOW ML_ENGINES WHERE NAME = '${engine}'`);
    expect(shown.data).toEqual([[engine, 'openai', expect.stringContaining('"api_key":"******"')]]);
    const project = unique('p');
    await t.http.post('/api/projects').send({ name: project }).expect(201);
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({ agent: { name: 'asker', model_name: 'gpt-e', provider: engine } })
      .expect(201);
    fake.enqueue(fakeReply.text('engine says hi'));
    const res = await t.http
      .post(`/api/projects/${project}/agents/asker/completions`)
      .send({ messages: [{ question: 'hi' }] })
      .expect(200);
    expect(res.body.message.content).toBe('engine says hi');
    expect(fake.requests()[0]!.headers.authorization).toBe(`Bearer ${engineKey}`);
    expect((await querySql(t, `DROP ML_ENGINE ${engine}`)).type).toBe('ok');
    expect((await querySql(t, `SHOW ML_ENGINES WHERE NAME = '${engine}'`)).data).toEqual([]);
    const events = await eventsOf(t, `ml-engine-${engine}`);
    expect(events.map((e) => e.type)).toEqual(['MlEngineCreated', 'MlEngineDeleted']);
  });
});

describe('an agent asked by a query that is stopped', () => {
  it('given a model that never answers, when the query passes its deadline (AGENT_SQL_TIMEOUT_MS, a query that asks agents), then it answers the deadline error and the agent run it started ends as stopped, not running', async () => {
    // The deadline leaves the agent time to reach the model on a busy machine (at load 18, 500 ms
    // ran out before the model was asked): what is tested is what the deadline stops, not how soon.
    const t = await startTestApp('sqlite', { SQL_TIMEOUT_MS: '3000', AGENT_SQL_TIMEOUT_MS: '3000' });
    const w = await givenAgent(t);
    try {
      w.fake.setFallback({ type: 'hang' });
      const res = await querySql(
        t,
        `SELECT answer FROM ${w.project}.${w.agent} WHERE question = 'never answered'`,
      );
      expect(res).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/ran longer than 3000 ms/),
      });
      expect(w.fake.requests().length).toBeGreaterThanOrEqual(1);
      // The query's stop reaches the agent: its call to the model is cut and the run ends at once
      // (left running, it would wait for the model's own request timeout, minutes).
      const runs = await until(
        'the agent run to end',
        async () => {
          const rows = (
            await querySql(
              t,
              `SELECT STATUS, VIA FROM information_schema.agent_runs WHERE QUESTION = 'never answered'`,
            )
          ).data!;
          return rows.length && rows[0]![0] !== 'running' ? rows : undefined;
        },
        5_000,
        100,
      );
      expect(runs).toHaveLength(1);
      expect(runs[0]).toEqual([expect.not.stringMatching(/^running$/), 'sql']);
    } finally {
      await w.fake.close();
      await t.dispose();
    }
  });
});

describe('agents in SQL', () => {
  let t: TestApp;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    t = await sharedSqliteApp();
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
  });

  it('answers SELECT answer FROM agent WHERE question = …, with its trace', async () => {
    const w = await givenAgent(t);
    fakes.push(w.fake);
    w.fake.setFallback((body) => fakeReply.text(`You asked: ${lastUserText(body)}`));
    const res = await querySql(
      t,
      `SELECT answer, question, trace_id FROM ${w.project}.${w.agent} WHERE question = 'What is 2+2?'`,
    );
    expect(res.type).toBe('table');
    expect(res.data).toEqual([
      ['You asked: What is 2+2?', 'What is 2+2?', expect.stringMatching(/^[0-9a-f-]{36}$/)],
    ]);
    const runs = await querySql(
      t,
      `SELECT VIA, QUESTION FROM information_schema.agent_runs WHERE TRACE_ID = :t`,
      {
        params: { t: res.data![0]![2] },
      },
    );
    expect(runs.data).toEqual([['sql', 'What is 2+2?']]);
  });

  it('answers every row of a joined table, each its own run (MindsDB answers only the last)', async () => {
    const w = await givenAgent(t);
    fakes.push(w.fake);
    w.fake.setFallback((body) => fakeReply.text(`A: ${lastUserText(body).toUpperCase()}`));
    const file = unique('questions');
    await t.http
      .put(`/api/files/${file}`)
      .attach('file', Buffer.from('id,question\n1,first one\n2,second one\n3,third one\n'), `${file}.csv`)
      .expect(200);
    const res = await querySql(
      t,
      `SELECT q.id, a.answer FROM files.${file} AS q JOIN ${w.project}.${w.agent} AS a ORDER BY q.id`,
    );
    expect(res.data).toEqual([
      [1, 'A: FIRST ONE'],
      [2, 'A: SECOND ONE'],
      [3, 'A: THIRD ONE'],
    ]);
    expect(w.fake.chatRequests().map(lastUserText).sort()).toEqual(['first one', 'second one', 'third one']);
  });

  it('refuses a join larger than AGENT_SQL_MAX_ROWS before asking anything', async () => {
    const small = await startTestApp('sqlite', { AGENT_SQL_MAX_ROWS: '2' });
    try {
      const w = await givenAgent(small);
      fakes.push(w.fake);
      const file = unique('many');
      await small.http
        .put(`/api/files/${file}`)
        .attach('file', Buffer.from('question\na\nb\nc\n'), `${file}.csv`)
        .expect(200);
      const res = await querySql(
        small,
        `SELECT a.answer FROM files.${file} AS q JOIN ${w.project}.${w.agent} AS a`,
      );
      expect(res).toMatchObject({ type: 'error', error_code: 1153 });
      expect(res.error_message).toMatch(/at most 2 \(AGENT_SQL_MAX_ROWS\)/);
      expect(w.fake.requests()).toEqual([]);
    } finally {
      await small.dispose();
    }
  });
});
