import {
  AgentRunError,
  buildSystemPrompt,
  normalizeMessages,
  runAgent,
  toolsFromSkills,
  type AgentRunEvent,
  type AgentTool,
  type RunAgentInput,
  type SqlToolPort,
} from '../../src/engines/agentLoop';
import { createLlmClient, type LlmClient } from '../../src/engines/llm';
import {
  fakeReply,
  lastUserText,
  latestToolResults,
  startFakeOpenAi,
  type FakeOpenAi,
} from '../support/fakeOpenAi';
import { memoryKbPort, memorySqlPort, ordersTable } from './memoryPorts';

const COUNT_SQL = 'SELECT COUNT(*) AS n FROM shop.orders';
const answers = {
  'select count(*) as n from shop.orders': { columns: ['n'], rows: [[4]] },
  "select sum(amount) as total from shop.orders where customer = 'alice'": {
    columns: ['total'],
    rows: [[17.75]],
  },
};

const sqlSkill = { name: 'shop_sql', type: 'sql', params: { database: 'shop', tables: ['orders'] } };

/** A world per test: a fresh in-memory port, tools from a sql skill, a client on the fake. */
const world = (fake: FakeOpenAi, options: { port?: SqlToolPort } = {}) => {
  const memory = memorySqlPort({ orders: ordersTable }, answers);
  const port = options.port ?? memory.port;
  const tools = toolsFromSkills({ skills: [sqlSkill] }, { sql: port });
  const llm = createLlmClient(
    { provider: 'openai', model: 'fake-model', baseUrl: fake.baseUrl, apiKey: 'sk-agent-key' },
    { retry: { baseDelayMs: 1, maxDelayMs: 2 } },
  );
  const events: AgentRunEvent[] = [];
  const run = (question: string, extra: Partial<RunAgentInput> = {}) =>
    runAgent({
      llm,
      model: 'fake-model',
      systemPrompt: buildSystemPrompt({ promptTemplate: 'You answer questions about the shop.', tools }),
      history: [],
      question,
      tools,
      onEvent: (e) => {
        events.push(e);
      },
      ...extra,
    });
  return { run, events, calls: memory.calls, tools, llm };
};

const failureOf = async (work: Promise<unknown>): Promise<AgentRunError> => {
  try {
    await work;
  } catch (error) {
    if (error instanceof AgentRunError) return error;
    throw error;
  }
  throw new Error('expected the run to fail');
};

const text2sqlConversation = [
  fakeReply.toolCall('sql_db_list_tables', {}),
  fakeReply.toolCall('sql_db_schema', { tables: ['shop.orders'] }),
  fakeReply.toolCall('sql_db_query', { query: COUNT_SQL }),
  fakeReply.text('There are 4 orders.'),
];

describe('agent loop (native tool calling, over the fake provider)', () => {
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('answers a question that needs no tool in one step, with ordered events', async () => {
    fake.enqueue(fakeReply.text('Hello! Ask me about the shop.'));
    const w = world(fake);

    const result = await w.run('hi');

    expect(result).toEqual({
      answer: 'Hello! Ask me about the shop.',
      sql: [],
      context: [],
      steps: 1,
      usage: expect.objectContaining({ totalTokens: expect.any(Number) }),
    });
    expect(w.events.map((e) => e.type)).toEqual([
      'run.started',
      'llm.request',
      'llm.response',
      'run.answered',
    ]);
    expect(w.events[0]).toMatchObject({
      type: 'run.started',
      model: 'fake-model',
      question: 'hi',
      historyMessages: 0,
      tools: ['sql_db_list_tables', 'sql_db_schema', 'sql_db_query'],
      limits: { maxSteps: 10, timeoutMs: 300_000 },
      stream: false,
    });
    expect(w.events[1]).toEqual({
      type: 'llm.request',
      step: 1,
      model: 'fake-model',
      messageCount: 2,
      tools: ['sql_db_list_tables', 'sql_db_schema', 'sql_db_query'],
      toolChoice: 'auto',
    });
    const [body] = fake.chatRequests();
    expect(body).toMatchObject({ temperature: 0, tool_choice: 'auto' });
    expect(body?.tools?.map((t) => t.function.name)).toEqual([
      'sql_db_list_tables',
      'sql_db_schema',
      'sql_db_query',
    ]);
  });

  it('text2sql: lists tables, reads the schema, queries, then answers with the SQL it ran', async () => {
    fake.conversation(text2sqlConversation);
    const w = world(fake);

    const result = await w.run('How many orders are there?');

    expect(result.answer).toBe('There are 4 orders.');
    expect(result.sql).toEqual([COUNT_SQL]);
    expect(result.steps).toBe(4);
    expect(w.calls.map((c) => [c.op, c.arg, c.limit])).toEqual([
      ['listTables', undefined, undefined],
      ['describe', ['shop.orders'], undefined],
      ['query', COUNT_SQL, 100],
    ]);
    expect(w.calls[0]?.scope).toEqual({ source: 'shop_sql', database: 'shop', tables: ['orders'] });
    expect(
      w.events.map((e) => (e.type.startsWith('tool') ? `${e.type}:${'name' in e ? e.name : ''}` : e.type)),
    ).toEqual([
      'run.started',
      'llm.request',
      'llm.response',
      'tool.called:sql_db_list_tables',
      'tool.result:sql_db_list_tables',
      'llm.request',
      'llm.response',
      'tool.called:sql_db_schema',
      'tool.result:sql_db_schema',
      'llm.request',
      'llm.response',
      'tool.called:sql_db_query',
      'tool.result:sql_db_query',
      'llm.request',
      'llm.response',
      'run.answered',
    ]);
    expect(w.events.find((e) => e.type === 'tool.result' && e.name === 'sql_db_query')).toMatchObject({
      ok: true,
      kind: 'sql_query',
      sql: COUNT_SQL,
      rows: 1,
    });
    // What the model was shown at each step.
    const bodies = fake.chatRequests();
    expect(latestToolResults(bodies[1]!)).toEqual([
      { name: 'sql_db_list_tables', content: '`shop`.`orders`' },
    ]);
    expect(latestToolResults(bodies[2]!)[0]?.content).toBe(
      [
        'CREATE TABLE shop.orders (\n  id INTEGER,\n  customer VARCHAR,\n  amount DOUBLE\n)',
        '/*\n3 rows from shop.orders table:\nid\tcustomer\tamount\n1\talice\t10.5\n2\tbob\t20\n3\talice\t7.25\n*/',
      ].join('\n\n'),
    );
    expect(JSON.parse(latestToolResults(bodies[3]!)[0]!.content)).toEqual({
      columns: ['n'],
      rows: [[4]],
      row_count: 1,
    });
    const assistantTurn = bodies[3]!.messages.filter((m) => m.role === 'assistant')[2];
    expect(assistantTurn?.tool_calls?.[0]?.function).toEqual({
      name: 'sql_db_query',
      arguments: JSON.stringify({ query: COUNT_SQL }),
    });
  });

  it('feeds a rejected query back as a tool error, and the model corrects itself', async () => {
    fake.conversation([
      fakeReply.toolCall('sql_db_query', { query: 'DELETE FROM shop.orders' }),
      fakeReply.toolCall('sql_db_query', { query: COUNT_SQL }),
      fakeReply.text('There are 4 orders.'),
    ]);
    const w = world(fake);

    const result = await w.run('How many orders?');

    expect(result.answer).toBe('There are 4 orders.');
    expect(result.sql).toEqual([COUNT_SQL]);
    const results = w.events.filter((e) => e.type === 'tool.result');
    expect(results[0]).toMatchObject({
      ok: false,
      rejected: true,
      sql: 'DELETE FROM shop.orders',
      error: 'only read-only statements (SELECT, SHOW, DESCRIBE) are allowed',
    });
    expect(results[1]).toMatchObject({ ok: true, sql: COUNT_SQL });
    expect(latestToolResults(fake.chatRequests()[1]!)).toEqual([
      {
        name: 'sql_db_query',
        content: JSON.stringify({ error: 'only read-only statements (SELECT, SHOW, DESCRIBE) are allowed' }),
      },
    ]);
  });

  it('sends malformed tool arguments and unknown tool names back to the model as errors', async () => {
    fake.conversation([
      fakeReply.toolCall('sql_db_query', '{"query": "SELECT COUNT(*'),
      fakeReply.toolCall('drop_everything', {}),
      fakeReply.toolCall('sql_db_list_tables', {}),
      fakeReply.toolCall('sql_db_schema', { tables: [] }),
      fakeReply.toolCall('sql_db_query', { query: COUNT_SQL }),
      fakeReply.text('4 orders.'),
    ]);
    const w = world(fake);

    const result = await w.run('How many orders?');

    expect(result.answer).toBe('4 orders.');
    // This run's requests only: the fake is shared by the file's tests (in random order), and a
    // request an earlier test gave up on (its deadline, its abort) can reach it after the reset on
    // a busy machine (seen at load 9: this test's first request was then bodies[1]).
    const bodies = fake.chatRequests().filter((b) => lastUserText(b) === 'How many orders?');
    const errorOf = (i: number) =>
      (JSON.parse(latestToolResults(bodies[i]!)[0]!.content) as { error: string }).error;
    expect(errorOf(1)).toMatch(
      /^the arguments of sql_db_query are not valid JSON \(.+\); send one JSON object/,
    );
    expect(errorOf(2)).toBe(
      'there is no tool named "drop_everything"; the tools are: sql_db_list_tables, sql_db_schema, sql_db_query',
    );
    expect(errorOf(4)).toMatch(/^invalid arguments for sql_db_schema: tables: /);
    const called = w.events.filter((e) => e.type === 'tool.called');
    expect(called[0]).toMatchObject({ name: 'sql_db_query', args: '{"query": "SELECT COUNT(*' });
    expect(called[1]).toMatchObject({ name: 'drop_everything', kind: 'unknown' });
  });

  it('gives up after 3 consecutive tool errors', async () => {
    fake.setFallback(fakeReply.toolCall('sql_db_query', { query: 'SELECT nope FROM shop.orders' }));
    const w = world(fake);

    const error = await failureOf(w.run('How many orders?'));

    expect(error.kind).toBe('tool_errors');
    expect(error.message).toBe(
      '3 tool calls failed in a row; the last: query failed: no such column or table in: SELECT nope FROM shop.orders',
    );
    expect(fake.chatRequests()).toHaveLength(3);
    expect(w.events[w.events.length - 1]).toMatchObject({
      type: 'run.failed',
      kind: 'tool_errors',
      steps: 3,
    });
  });

  it('sends the history to the provider in order, from both MindsDB message shapes', async () => {
    const shapes = [
      [
        { question: 'Who ordered most?', answer: 'alice' },
        { question: 'How much did she spend?', answer: null },
      ],
      [
        { role: 'user', content: 'Who ordered most?' },
        { role: 'assistant', content: 'alice' },
        { role: 'user', content: 'How much did she spend?' },
      ],
    ];
    for (const messages of shapes) {
      fake.reset();
      fake.enqueue(fakeReply.text('She spent 17.75.'));
      const w = world(fake);
      const { history, question } = normalizeMessages(messages);

      await w.run(question, { history, systemPrompt: 'SYSTEM' });

      expect(fake.chatRequests()[0]?.messages).toEqual([
        { role: 'system', content: 'SYSTEM' },
        { role: 'user', content: 'Who ordered most?' },
        { role: 'assistant', content: 'alice' },
        { role: 'user', content: 'How much did she spend?' },
      ]);
      expect(w.events[0]).toMatchObject({ historyMessages: 2 });
    }
  });

  it('after maxSteps asks once for an answer without tools (LangChain "generate")', async () => {
    fake.when(
      { when: (body) => body.tool_choice === 'none' },
      fakeReply.text('I could only list the tables: orders.'),
    );
    fake.setFallback(fakeReply.toolCall('sql_db_list_tables', {}));
    const w = world(fake);

    const result = await w.run('Tell me everything', { limits: { maxSteps: 3 } });

    expect(result.answer).toBe('I could only list the tables: orders.');
    expect(result.steps).toBe(4);
    const bodies = fake.chatRequests();
    expect(bodies.map((b) => b.tool_choice)).toEqual(['auto', 'auto', 'auto', 'none']);
    expect(bodies[3]?.messages[bodies[3].messages.length - 1]).toEqual({
      role: 'system',
      content: expect.stringContaining('You have used the 3 tool steps this question allows.'),
    });
  });

  it('fails with max_steps when a model never stops calling tools', async () => {
    fake.setFallback(fakeReply.toolCall('sql_db_list_tables', {}));
    const w = world(fake);

    const error = await failureOf(w.run('Loop forever', { limits: { maxSteps: 2 } }));

    expect(error.kind).toBe('max_steps');
    expect(error.steps).toBe(3);
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it('times out a run whose model does not answer in time', async () => {
    fake.setFallback(fakeReply.hang());
    const w = world(fake);

    const error = await failureOf(w.run('slow?', { limits: { timeoutMs: 200 } }));

    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('the agent did not answer within 0.2 s');
    expect(w.events[w.events.length - 1]).toMatchObject({ type: 'run.failed', kind: 'timeout' });
  });

  it('times out a run whose tool never returns, even if the tool ignores its signal', async () => {
    fake.conversation([fakeReply.toolCall('sql_db_list_tables', {})]);
    const stuck: SqlToolPort = {
      listTables: () => new Promise(() => undefined),
      describe: async () => [],
      query: async () => ({ columns: [], rows: [] }),
    };
    const w = world(fake, { port: stuck });

    const error = await failureOf(w.run('tables?', { limits: { timeoutMs: 200 } }));

    expect(error.kind).toBe('timeout');
    expect(w.events.map((e) => e.type).slice(-2)).toEqual(['tool.called', 'run.failed']);
  });

  it('stops when the caller aborts', async () => {
    fake.setFallback(fakeReply.hang());
    const w = world(fake);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);

    const error = await failureOf(w.run('anything', { signal: controller.signal }));

    expect(error.kind).toBe('aborted');
    expect(error.message).toBe('the run was cancelled');
  });

  it('fails with the provider error kind: authentication, its message free of the key', async () => {
    fake.enqueue(fakeReply.invalidKey('sk-agent-key'));
    const w = world(fake);

    const error = await failureOf(w.run('hi'));

    expect(error.kind).toBe('authentication');
    expect(error.message).toBe('the provider rejected the API key (HTTP 401)');
    expect(JSON.stringify(w.events)).not.toContain('sk-agent-key');
  });

  it('survives a 429 then answers, the retry visible in the llm.response event', async () => {
    fake.enqueue(fakeReply.rateLimited(0), fakeReply.text('Done.'));
    const w = world(fake);

    expect((await w.run('hi')).answer).toBe('Done.');

    expect(fake.chatRequests()).toHaveLength(2);
    expect(w.events.find((e) => e.type === 'llm.response')).toMatchObject({ retries: 1 });
  });

  it('streams the answer as deltas that make the same answer, events and SQL as without streaming', async () => {
    const answer = 'There are 4 orders, placed by 3 customers.';
    const script = [...text2sqlConversation.slice(0, 3), fakeReply.text(answer)];
    fake.conversation(script);
    const plain = world(fake);
    const whole = await plain.run('How many orders are there?');

    fake.reset();
    fake.conversation(script.map((r) => (r.type === 'tool_calls' ? { ...r, argumentsChunkSize: 2 } : r)));
    const streamed = world(fake);
    const deltas: { step: number; text: string }[] = [];
    const result = await streamed.run('How many orders are there?', { onTextDelta: (d) => deltas.push(d) });

    expect(result).toEqual({ ...whole, usage: result.usage });
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.every((d) => d.step === 4)).toBe(true);
    expect(deltas.map((d) => d.text).join('')).toBe(answer);
    // The streamed fragments of the query's arguments reached the port whole.
    expect(streamed.calls.find((c) => c.op === 'query')?.arg).toBe(COUNT_SQL);
    const shape = (events: AgentRunEvent[]) =>
      events.map((e) => (e.type === 'run.started' ? { ...e, stream: null } : { type: e.type }));
    expect(shape(streamed.events)).toEqual(shape(plain.events));
    expect(streamed.events[0]).toMatchObject({ stream: true });
    expect(fake.chatRequests().every((b) => b.stream === true)).toBe(true);
  });

  it('fails a streamed run whose stream is cut, as a provider error', async () => {
    fake.enqueue(fakeReply.text('a b c d e f', { cutAfterChunks: 3 }));
    const w = world(fake);

    const error = await failureOf(w.run('hi', { onTextDelta: () => undefined }));

    expect(error.kind).toBe('provider_error');
  });

  it('cuts tool results to the bound, keeping whole rows', async () => {
    const many = {
      columns: ['id', 'note'],
      rows: Array.from({ length: 500 }, (_, i) => [i, `note number ${i}`]),
    };
    const port: SqlToolPort = {
      listTables: async () => [],
      describe: async () => [],
      query: async () => many,
    };
    fake.conversation([
      fakeReply.toolCall('sql_db_query', { query: 'SELECT * FROM shop.orders' }),
      fakeReply.text('ok'),
    ]);
    const w = world(fake, { port });

    await w.run('list', { limits: { maxToolResultChars: 1_000 } });

    const shown = latestToolResults(fake.chatRequests()[1]!)[0]!.content;
    expect(shown.length).toBeLessThanOrEqual(1_000);
    const parsed = JSON.parse(shown) as { rows: unknown[]; row_count: number; rows_not_shown: number };
    expect(parsed.row_count).toBe(500);
    expect(parsed.rows.length + parsed.rows_not_shown).toBe(500);
    expect(parsed.rows[parsed.rows.length - 1]).toEqual([
      parsed.rows.length - 1,
      `note number ${parsed.rows.length - 1}`,
    ]);
  });

  it('searches a knowledge base and returns the passages as context', async () => {
    const kb = memoryKbPort({
      docs_kb: [
        {
          id: 'd1',
          content: 'Refunds are accepted within 30 days.',
          metadata: { source: 'policy.md' },
          relevance: 0.9,
        },
        { id: 'd2', content: 'Shipping takes 3 days.', relevance: 0.4 },
      ],
    });
    const tools: AgentTool[] = toolsFromSkills(
      {
        skills: [
          {
            name: 'docs',
            type: 'knowledge_base',
            params: { source: 'docs_kb', description: 'shop policies' },
          },
        ],
      },
      { kb: kb.port },
    );
    fake.conversation([
      fakeReply.toolCall('kb_query_tool', { query: 'refund window', limit: 1 }),
      fakeReply.text('Refunds are accepted within 30 days.'),
    ]);
    const w = world(fake);

    const result = await w.run('How long do I have for a refund?', { tools });

    expect(kb.calls).toEqual([{ kb: 'docs_kb', query: 'refund window', limit: 1 }]);
    expect(result.context).toEqual([
      {
        knowledge_base: 'docs_kb',
        id: 'd1',
        content: 'Refunds are accepted within 30 days.',
        metadata: { source: 'policy.md' },
        relevance: 0.9,
      },
    ]);
    expect(w.events[w.events.length - 1]).toMatchObject({ type: 'run.answered', context: result.context });
  });

  it('runs 20 conversations at once without mixing them up', async () => {
    fake.conversation(text2sqlConversation);
    const w = world(fake);

    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => w.run(`How many orders? #${i}`)));

    expect(results.every((r) => r.answer === 'There are 4 orders.' && r.sql[0] === COUNT_SQL)).toBe(true);
    expect(fake.chatRequests()).toHaveLength(80);
  });
});

describe('agent loop with a client that is not the OpenAI one', () => {
  it('needs only the LlmClient interface (an adapter can replace the SDK)', async () => {
    const scripted: LlmClient = {
      provider: 'scripted',
      chat: async (req) => ({
        message: {
          role: 'assistant',
          content: `echo: ${String(req.messages[req.messages.length - 1]?.content)}`,
        },
        finishReason: 'stop',
        usage: null,
        latencyMs: 0,
        retries: 0,
      }),
      chatStream: () => {
        throw new Error('not used');
      },
      embed: async () => [],
      listModels: async () => [],
    };

    const result = await runAgent({
      llm: scripted,
      model: 'm',
      systemPrompt: 's',
      history: [],
      question: 'ping',
      tools: [],
    });

    expect(result).toEqual({ answer: 'echo: ping', sql: [], context: [], steps: 1, usage: null });
  });
});
