import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createLlmClient,
  LlmError,
  type ChatStreamEvent,
  type LlmClientOptions,
  type LlmSettings,
} from '../../src/engines/llm';
import { fakeEmbedding, fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';

const KEY = 'sk-test-0123456789abcdefXYZ';

const settingsFor = (fake: FakeOpenAi, extra: Partial<LlmSettings> = {}): LlmSettings => ({
  provider: 'openai',
  model: 'fake-model',
  baseUrl: fake.baseUrl,
  apiKey: KEY,
  ...extra,
});

/** Retries without the production back-off, so specs stay quick. */
const fast: LlmClientOptions = { retry: { baseDelayMs: 1, maxDelayMs: 5 } };

const failure = async (work: Promise<unknown>): Promise<LlmError> => {
  try {
    await work;
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
};

const collect = async (events: AsyncIterable<ChatStreamEvent>) => {
  const out: ChatStreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
};

const question = [{ role: 'user' as const, content: 'How many orders are there?' }];
const tools = [
  {
    name: 'sql_db_query',
    description: 'run a query',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
];

describe('LLM client over the OpenAI protocol (fake provider on a real socket)', () => {
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi({ models: ['fake-model', 'other-model'] });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('sends the key as a Bearer token and the request as OpenAI expects, and reads the answer', async () => {
    fake.enqueue(fakeReply.text('There are 42 orders.'));
    const llm = createLlmClient(settingsFor(fake, { maxTokens: 100 }), fast);

    const res = await llm.chat({ model: 'fake-model', messages: question, tools, temperature: 0 });

    expect(res.message).toEqual({ role: 'assistant', content: 'There are 42 orders.' });
    expect(res.finishReason).toBe('stop');
    expect(res.usage).toEqual({ promptTokens: 6, completionTokens: 4, totalTokens: 10 });
    expect(res.retries).toBe(0);
    const [recorded] = fake.requests();
    expect(recorded?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(recorded?.body).toEqual({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'How many orders are there?' }],
      tools: [{ type: 'function', function: tools[0] }],
      tool_choice: 'auto',
      temperature: 0,
      max_tokens: 100,
      stream: false,
    });
  });

  it('reads tool calls with their raw arguments', async () => {
    fake.enqueue(
      fakeReply.toolCalls([
        { name: 'sql_db_query', arguments: { query: 'SELECT 1' }, id: 'call_a' },
        { name: 'sql_db_list_tables', arguments: '{}', id: 'call_b' },
      ]),
    );
    const llm = createLlmClient(settingsFor(fake), fast);

    const res = await llm.chat({ model: 'fake-model', messages: question, tools });

    expect(res.finishReason).toBe('tool_calls');
    expect(res.message.toolCalls).toEqual([
      { id: 'call_a', name: 'sql_db_query', arguments: '{"query":"SELECT 1"}' },
      { id: 'call_b', name: 'sql_db_list_tables', arguments: '{}' },
    ]);
  });

  it('streams text deltas and assembles the same message as the non-streamed call', async () => {
    const answer = 'There are 42 orders, worth 1,234.50 in total.';
    fake.enqueue(fakeReply.text(answer), fakeReply.text(answer));
    const llm = createLlmClient(settingsFor(fake), fast);

    const whole = await llm.chat({ model: 'fake-model', messages: question });
    const events = await collect(llm.chatStream({ model: 'fake-model', messages: question }));

    const deltas = events.flatMap((e) => (e.type === 'text' ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe(answer);
    const done = events[events.length - 1];
    expect(done?.type).toBe('done');
    if (done?.type !== 'done') return;
    expect(done.message).toEqual(whole.message);
    expect(done.finishReason).toBe('stop');
    expect(done.usage).toEqual(whole.usage);
    expect(fake.chatRequests()[1]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('reassembles tool-call arguments streamed in fragments split mid-JSON, per call index', async () => {
    const args = { query: 'SELECT customer, "amount" FROM orders WHERE note = \'a \\"quoted\\" ünïcode\'' };
    fake.enqueue(
      fakeReply.toolCalls(
        [
          { name: 'sql_db_query', arguments: args, id: 'call_1' },
          { name: 'sql_db_schema', arguments: { tables: ['orders', 'customers'] }, id: 'call_2' },
        ],
        { argumentsChunkSize: 3 },
      ),
    );
    const llm = createLlmClient(settingsFor(fake), fast);

    const events = await collect(llm.chatStream({ model: 'fake-model', messages: question, tools }));

    const fragments = events.filter((e) => e.type === 'tool_arguments');
    expect(fragments.length).toBeGreaterThan(10);
    const done = events[events.length - 1];
    if (done?.type !== 'done') throw new Error('no done event');
    expect(done.finishReason).toBe('tool_calls');
    expect(
      done.message.toolCalls?.map((c) => ({ ...c, arguments: JSON.parse(c.arguments) as unknown })),
    ).toEqual([
      { id: 'call_1', name: 'sql_db_query', arguments: args },
      { id: 'call_2', name: 'sql_db_schema', arguments: { tables: ['orders', 'customers'] } },
    ]);
  });

  it('retries a 429 as soon as retry-after allows, not after its own longer back-off', async () => {
    fake.enqueue(fakeReply.rateLimited(0), fakeReply.text('fine now'));
    // A 60 s back-off would outlast the test: only honouring `retry-after: 0` lets it pass.
    const llm = createLlmClient(settingsFor(fake), { retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 } });

    const res = await llm.chat({ model: 'fake-model', messages: question });

    expect(res.message.content).toBe('fine now');
    expect(res.retries).toBe(1);
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it('gives up on a 429 that asks for a longer wait than allowed, saying how long', async () => {
    fake.enqueue(fakeReply.rateLimited(120), fakeReply.text('never asked'));
    const llm = createLlmClient(settingsFor(fake), { retry: { maxRetryAfterMs: 10_000 } });

    const error = await failure(llm.chat({ model: 'fake-model', messages: question }));

    expect(error.kind).toBe('rate_limit');
    expect(error.retryAfterMs).toBe(120_000);
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it('retries 5xx with back-off up to maxRetries, then reports a provider error', async () => {
    fake.enqueue(fakeReply.serverError(500), fakeReply.serverError(503), fakeReply.text('third time'));
    const llm = createLlmClient(settingsFor(fake), { retry: { maxRetries: 2, baseDelayMs: 1 } });
    expect((await llm.chat({ model: 'fake-model', messages: question })).retries).toBe(2);
    expect(fake.chatRequests()).toHaveLength(3);

    fake.reset();
    fake.setFallback(fakeReply.serverError(502));
    const error = await failure(llm.chat({ model: 'fake-model', messages: question }));
    expect(error).toMatchObject({ kind: 'provider_error', status: 502 });
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it('never retries other 4xx: bad request and unknown model', async () => {
    fake.enqueue(fakeReply.error(400, "Invalid value for 'temperature'"), fakeReply.text('unused'));
    const llm = createLlmClient(settingsFor(fake), fast);
    const bad = await failure(llm.chat({ model: 'fake-model', messages: question }));
    expect(bad.kind).toBe('bad_request');
    expect(bad.message).toContain("Invalid value for 'temperature'");
    expect(fake.chatRequests()).toHaveLength(1);

    fake.reset();
    fake.enqueue(fakeReply.error(404, 'The model `gpt-9` does not exist', { code: 'model_not_found' }));
    const missing = await failure(llm.chat({ model: 'gpt-9', messages: question }));
    expect(missing.kind).toBe('not_found');
    expect(missing.message).toContain("model 'gpt-9'");
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it('maps a 401 to an authentication error whose message does not quote the key', async () => {
    const strict = await startFakeOpenAi({ apiKeys: ['sk-the-right-one'] });
    try {
      const llm = createLlmClient(settingsFor(strict), fast);
      const error = await failure(llm.chat({ model: 'fake-model', messages: question }));
      expect(error.kind).toBe('authentication');
      expect(error.status).toBe(401);
      expect(error.message).toBe('the provider rejected the API key (HTTP 401)');
      expect(error.message).not.toContain(KEY);
      expect(error.message).not.toContain(KEY.slice(-4));
      expect(strict.chatRequests()).toHaveLength(1);
    } finally {
      await strict.close();
    }
  });

  it('removes the key from provider messages it does quote', async () => {
    fake.enqueue(fakeReply.error(400, `header Authorization: Bearer ${KEY} is malformed; api_key=${KEY}`));
    const llm = createLlmClient(settingsFor(fake), fast);

    const error = await failure(llm.chat({ model: 'fake-model', messages: question }));

    expect(error.kind).toBe('bad_request');
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain('******');
  });

  it('reports an unreachable provider (nothing listens on the port)', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((r) => closed.close(() => r()));
    const llm = createLlmClient({ ...settingsFor(fake), baseUrl: `http://127.0.0.1:${port}/v1` }, fast);

    const error = await failure(llm.chat({ model: 'fake-model', messages: question }));

    expect(error.kind).toBe('unreachable');
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('times out an attempt that gets no answer, without retrying it', async () => {
    fake.enqueue(fakeReply.hang(), fakeReply.text('too late'));
    const llm = createLlmClient(settingsFor(fake), { ...fast, requestTimeoutMs: 150 });

    const error = await failure(llm.chat({ model: 'fake-model', messages: question }));

    expect(error.kind).toBe('timeout');
    expect(error.message).toBe('the provider did not answer within 150 ms');
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it('times out a stream that goes silent between chunks', async () => {
    fake.enqueue(fakeReply.text('one two three four', { chunkDelayMs: 400 }));
    const llm = createLlmClient(settingsFor(fake), { ...fast, requestTimeoutMs: 150 });

    const error = await failure(collect(llm.chatStream({ model: 'fake-model', messages: question })));

    expect(error.kind).toBe('timeout');
  });

  it('stops at once when the caller aborts, even while waiting to retry', async () => {
    fake.enqueue(fakeReply.hang());
    const llm = createLlmClient(settingsFor(fake), fast);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    expect(
      (await failure(llm.chat({ model: 'fake-model', messages: question, signal: controller.signal }))).kind,
    ).toBe('aborted');

    fake.enqueue(fakeReply.rateLimited(30));
    const waiting = createLlmClient(settingsFor(fake), { retry: { maxRetryAfterMs: 60_000 } });
    const second = new AbortController();
    setTimeout(() => second.abort(), 50);
    const error = await failure(
      waiting.chat({ model: 'fake-model', messages: question, signal: second.signal }),
    );
    expect(error.kind).toBe('aborted');
  });

  it('reports a stream cut before [DONE] as a provider error, and does not replay it', async () => {
    fake.enqueue(fakeReply.text('a b c d e f g h', { cutAfterChunks: 4 }), fakeReply.text('unused'));
    const llm = createLlmClient(settingsFor(fake), fast);
    const seen: string[] = [];

    const error = await failure(
      (async () => {
        for await (const e of llm.chatStream({ model: 'fake-model', messages: question }))
          if (e.type === 'text') seen.push(e.delta);
      })(),
    );

    expect(error.kind).toBe('provider_error');
    expect(seen.join('')).toBe('a b c ');
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it('retries a stream that failed before its first chunk', async () => {
    fake.enqueue(fakeReply.serverError(500), fakeReply.text('streamed'));
    const llm = createLlmClient(settingsFor(fake), fast);

    const events = await collect(llm.chatStream({ model: 'fake-model', messages: question }));

    const done = events[events.length - 1];
    expect(done).toMatchObject({ type: 'done', retries: 1, message: { content: 'streamed' } });
  });

  it('embeds texts as float vectors in input order, and decodes base64 from servers that send it', async () => {
    const llm = createLlmClient(settingsFor(fake), { ...fast, embedBatchSize: 2 });
    const input = ['orders of alice', 'refund policy', 'shipping to Norway'];

    const vectors = await llm.embed({ model: 'fake-embedding', input });

    expect(vectors).toEqual(input.map((t) => fakeEmbedding(t, 64)));
    const bodies = fake.requests().map((r) => r.body);
    expect(bodies).toEqual([
      { model: 'fake-embedding', input: input.slice(0, 2), encoding_format: 'float' },
      { model: 'fake-embedding', input: input.slice(2), encoding_format: 'float' },
    ]);

    const b64 = await startFakeOpenAi({ embeddingEncoding: 'base64', embeddingDimensions: 16 });
    try {
      const other = createLlmClient(settingsFor(b64), fast);
      const decoded = await other.embed({ model: 'e', input: ['refund policy'] });
      expect(decoded[0]).toHaveLength(16);
      fakeEmbedding('refund policy', 16).forEach((x, i) => expect(decoded[0]![i]).toBeCloseTo(x, 6));
    } finally {
      await b64.close();
    }
  });

  it('lists the models the provider serves', async () => {
    const llm = createLlmClient(settingsFor(fake), fast);
    expect(await llm.listModels()).toEqual(['fake-model', 'other-model']);
  });

  it('talks to Azure-style gateways with an api-key header and the api-version', async () => {
    fake.enqueue(fakeReply.text('hello from azure'));
    const llm = createLlmClient(
      settingsFor(fake, { provider: 'azure_openai', apiVersion: '2024-10-21' }),
      fast,
    );

    await llm.chat({ model: 'fake-model', messages: question });

    const [recorded] = fake.requests();
    expect(recorded?.headers['api-key']).toBe(KEY);
    expect(recorded?.query).toEqual({ 'api-version': '2024-10-21' });
    expect(recorded?.path).toBe('/v1/chat/completions');
  });
});
