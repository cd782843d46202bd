import { fakeEmbedding, fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';

/** The fake is shared by agent, knowledge-base and chatbot specs: its own contract, over raw HTTP. */
describe('fake OpenAI provider', () => {
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const chat = (body: Record<string, unknown>) =>
    fetch(`${fake.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' },
      body: JSON.stringify({ model: 'fake-model', ...body }),
    });
  const user = (content: string) => ({ messages: [{ role: 'user', content }] });
  const contentOf = async (res: Response) =>
    ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content;

  it('answers by rule first (matching the last user message), then the queue, then the fallback', async () => {
    fake
      .when({ lastUser: /weather/ }, fakeReply.text('sunny'), { times: 1 })
      .enqueue(fakeReply.text('first'), fakeReply.text('second'))
      .setFallback(fakeReply.text('fallback'));

    expect(await contentOf(await chat(user('hello')))).toBe('first');
    expect(await contentOf(await chat(user('the weather?')))).toBe('sunny');
    expect(await contentOf(await chat(user('the weather again?')))).toBe('second');
    expect(await contentOf(await chat(user('hello')))).toBe('fallback');
  });

  it('says so, with a 500, when nothing was scripted', async () => {
    const res = await chat(user('hello'));
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      error: {
        message: 'fake-openai: nothing was scripted for this request',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
  });

  it('matches on tool results since the last assistant turn', async () => {
    fake.when({ hasToolResult: 'sql_db_query', toolResultIncludes: '"n"' }, fakeReply.text('counted'));
    fake.setFallback(fakeReply.text('no'));
    const messages = [
      { role: 'user', content: 'count' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'sql_db_query', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"columns":["n"]}' },
    ];
    expect(await contentOf(await chat({ messages }))).toBe('counted');
    expect(await contentOf(await chat({ messages: messages.slice(0, 1) }))).toBe('no');
  });

  it('streams SSE chunks ending with the usage chunk and [DONE]', async () => {
    fake.enqueue(fakeReply.text('a b'));
    const res = await chat({ ...user('x'), stream: true, stream_options: { include_usage: true } });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const lines = (await res.text()).split('\n\n').filter(Boolean);
    expect(lines[lines.length - 1]).toBe('data: [DONE]');
    const chunks = lines
      .slice(0, -1)
      .map((l) => JSON.parse(l.replace(/^data: /, '')) as Record<string, unknown>);
    expect(
      chunks.map((c) => (c.choices as { delta?: unknown; finish_reason?: unknown }[])[0] ?? 'usage'),
    ).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: 'a ' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: 'b' }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' },
      'usage',
    ]);
    expect(chunks[4]).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [],
      usage: { total_tokens: 4 },
    });
  });

  it('is scriptable and inspectable over its HTTP control plane, for other processes', async () => {
    await fetch(`${fake.origin}/__fake/script`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        rules: [{ match: { lastUser: '^ping$' }, respond: { type: 'text', content: 'pong' } }],
        queue: [{ type: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '1' } }],
      }),
    });
    expect(await contentOf(await chat(user('ping')))).toBe('pong');
    const limited = await chat(user('other'));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');

    const recorded = (await (await fetch(`${fake.origin}/__fake/requests`)).json()) as {
      path: string;
      headers: Record<string, string>;
      body: { messages: unknown[] };
    }[];
    expect(recorded.map((r) => [r.path, r.headers.authorization, r.body.messages])).toEqual([
      ['/v1/chat/completions', 'Bearer sk-x', [{ role: 'user', content: 'ping' }]],
      ['/v1/chat/completions', 'Bearer sk-x', [{ role: 'user', content: 'other' }]],
    ]);
    await fetch(`${fake.origin}/__fake/reset`, { method: 'POST' });
    expect(await (await fetch(`${fake.origin}/__fake/requests`)).json()).toEqual([]);
  });

  it('embeds deterministically: normalised, similar texts closer than unrelated ones, dimensions on request', async () => {
    const res = await fetch(`${fake.baseUrl}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'e',
        input: ['refund policy for orders', 'orders refund', 'weather in Oslo'],
        dimensions: 32,
      }),
    });
    const { data } = (await res.json()) as { data: { index: number; embedding: number[] }[] };
    const [a, b, c] = data.map((d) => d.embedding);
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    expect(a).toHaveLength(32);
    expect(dot(a!, a!)).toBeCloseTo(1, 10);
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!));
    expect(a).toEqual(fakeEmbedding('refund policy for orders', 32));

    fake.failEmbeddings(fakeReply.serverError(503));
    const failed = await fetch(`${fake.baseUrl}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'e', input: 'x' }),
    });
    expect(failed.status).toBe(503);
  });
});
