/**
 * Hostile A2A requests, generated (fast-check, a fresh seed each run, bounded runs): message text, context,
 * message and task ids made of full Unicode with lone surrogates and NUL, huge, empty; params of
 * no shape at all (deep, huge, wrong types); over v0.3 (message/send, message/stream, tasks/get,
 * tasks/cancel) and v1.0 (SendMessage, GetTask). Whatever comes, the answer is a JSON-RPC answer or
 * a 4xx, never a 500 nor a dropped connection, and the log stays writable, its read model running.
 * Beside it, a kill check: an agent look-up that reads its reference as an id with `BigInt()`
 * unchecked (a name throws a raw SyntaxError, answered 500) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { hostileStrings, withLoneSurrogate } from '../support/hostile';
import { agentUrl, listen, type Listening } from './support';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';
import { refsReadAsBigInt, whileBugged } from '../support/killChecks';

const SEED = Number(process.env.A2A_HOSTILE_SEED ?? propertySeed());

/**
 * A request that starts a run, tried first on every seed: the check after the property asks for runs
 * recorded via A2A, and fresh seeds (731412628, 1740646756) drew no request that starts one. Its
 * text is odd but keepable (a question holding NUL or a lone surrogate is rejected, no run).
 */
const startsARun: [Call, undefined] = [
  {
    version: '1.0',
    method: 'SendMessage',
    params: {
      message: {
        messageId: '7f0c5a7e-0d1e-4c59-9a53-0b7d3c1f2a41',
        role: 'ROLE_USER',
        parts: [{ text: 'What is in the ledger? ☃ \u202e🧪' }],
      },
    },
  },
  undefined,
];
const RUNS = Number(process.env.A2A_HOSTILE_RUNS ?? 60);

const hostileString = hostileStrings(['%', '../', 'a'], 200_000);

const lonely = withLoneSurrogate(hostileString);

const deep = (depth: number, leaf: unknown): unknown =>
  Array.from({ length: depth }).reduce<unknown>((v, _, i) => (i % 2 ? [v] : { k: v }), leaf);

const junk: fc.Arbitrary<unknown> = fc.oneof(
  lonely,
  fc.integer(),
  fc.constant(null),
  fc.constant({}),
  fc.constant([]),
  fc.integer({ min: 1, max: 300 }).map((d) => deep(d, 'x')),
  fc.dictionary(lonely, lonely, { maxKeys: 3 }),
);

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

/** A v0.3 message with hostile text and ids. */
const legacyMessage = fc.record({
  kind: fc.constant('message'),
  role: fc.constantFrom('user', 'agent', 'nobody'),
  messageId: fc.oneof(fc.uuid(), lonely),
  contextId: maybe(fc.oneof(fc.uuid(), lonely)),
  taskId: fc.option(fc.oneof(lonely, fc.uuid()), { nil: undefined, freq: 4 }),
  parts: fc.array(
    fc.oneof({ weight: 3, arbitrary: fc.record({ kind: fc.constant('text'), text: lonely }) }, junk),
    {
      minLength: 1,
      maxLength: 3,
    },
  ),
});

/** A v1.0 message (ProtoJSON) with hostile text and ids. */
const message = fc.record({
  messageId: fc.oneof(fc.uuid(), lonely),
  contextId: maybe(fc.oneof(fc.uuid(), lonely)),
  role: fc.constantFrom('ROLE_USER', 'ROLE_AGENT', 'ROLE_UNSPECIFIED'),
  parts: fc.array(fc.oneof({ weight: 3, arbitrary: fc.record({ text: lonely }) }, junk), {
    minLength: 1,
    maxLength: 3,
  }),
});

/** An agent's path segment as a hostile client sends it: any text, or bytes no text decodes to. */
const agentSegment = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }).map(encodeURIComponent),
  fc.constantFrom('%ED%A0%80', '%00', '%FF%FE', '..%2F..', '%', 'helper%00', 'a'.repeat(5000)),
);

type Call = { version: '0.3' | '1.0'; method: string; params: unknown };

const calls: fc.Arbitrary<Call> = fc.oneof(
  fc.record({
    version: fc.constant('0.3' as const),
    method: fc.constant('message/send'),
    params: fc.oneof(fc.record({ message: legacyMessage }), junk),
  }),
  fc.record({
    version: fc.constant('0.3' as const),
    method: fc.constant('message/stream'),
    params: fc.record({ message: legacyMessage }),
  }),
  fc.record({
    version: fc.constant('0.3' as const),
    method: fc.constantFrom('tasks/get', 'tasks/cancel', 'tasks/resubscribe'),
    params: fc.oneof(fc.record({ id: fc.oneof(lonely, fc.uuid()) }), junk),
  }),
  fc.record({
    version: fc.constant('1.0' as const),
    method: fc.constant('SendMessage'),
    params: fc.oneof(fc.record({ message }), junk),
  }),
  fc.record({
    version: fc.constant('1.0' as const),
    method: fc.constantFrom('GetTask', 'CancelTask', 'ListTasks'),
    params: fc.oneof(fc.record({ id: fc.oneof(lonely, fc.uuid()) }), junk),
  }),
  fc.record({ version: fc.constantFrom('0.3' as const, '1.0' as const), method: lonely, params: junk }),
);

describe.each(storeKinds)('hostile A2A requests (%s)', (store) => {
  let t: TestApp;
  let l: Listening;
  let fake: FakeOpenAi;
  let project: string;

  beforeAll(async () => {
    t = await startTestApp(store);
    l = await listen(t);
    fake = await startFakeOpenAi();
    fake.setFallback(fakeReply.text('An answer.'));
    project = `hostile_${store}`;
    await t.http.post('/api/projects').send({ name: project }).expect(201);
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: {
          name: 'helper',
          model: { model_name: 'gpt-test', provider: 'openai', base_url: fake.baseUrl },
        },
      })
      .expect(201);
  });
  afterAll(async () => {
    await fake?.close();
    await l?.close();
    await t?.dispose();
  });

  /** Which agent a request names: the agent itself mostly, else a hostile path segment. */
  const agents = fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: agentSegment },
  );

  /** One request: a JSON-RPC answer (200) or a 4xx, never a 500; `seen` counts what came back. */
  const answeredBelow500 = async (
    call: Call,
    agent: string | undefined,
    seen = new Map<string, number>(),
  ) => {
    const url =
      agent === undefined ? agentUrl(l.url, project, 'helper') : `${l.url}/a2a/${project}/${agent}/`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': call.version },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params }),
    });
    const body = await res.text();
    const key = `${call.method.slice(0, 20)} ${res.status} ${(/"state":"?([A-Za-z_]+)/.exec(body) ?? /"code":(-?\d+)/.exec(body) ?? [])[1] ?? ''}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    if (res.status >= 500) throw new Error(`${res.status} for ${call.method}: ${body.slice(0, 300)}`);
    expect(res.status === 200 || (res.status >= 400 && res.status < 500)).toBe(true);
  };

  it('answers every hostile request with JSON-RPC or a 4xx, never a 500; the log stays writable', async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(calls, agents, (call, agent) => answeredBelow500(call, agent, seen)),
      { seed: SEED, numRuns: propertyRuns(RUNS), endOnFailure: true, examples: [startsARun] },
    );
    // Something of each kind was tried, and answered.
    expect(seen.size).toBeGreaterThan(3);
    // The log stays writable, the read model running: a write is answered and read back.
    await t.http
      .post('/api/projects')
      .send({ name: `after_${store}` })
      .expect(201);
    await t.http.get(`/api/projects/after_${store}`).expect(200);
    const status = await t.http.get('/api/status').expect(200);
    expect((status.body as { read_model: { failed: unknown } }).read_model.failed).toBeNull();
    // Questions did reach the agent (the first request's at least): runs were recorded via A2A.
    const runs = (await t.running.ctx.log.readPage({ after: 0n, limit: 100_000 })).filter(
      (e) => e.type === 'AgentRunStarted',
    );
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.every((e) => (e.data as { via: string }).via === 'a2a')).toBe(true);
  }, 180_000);

  it('kill check: an agent look-up that reads its reference with BigInt() unchecked (a raw error, a 500) is caught', async () => {
    // The bug: the agent is looked up as an id first (`String(BigInt(ref))`, leading zeros dropped)
    // unchecked; a name throws a SyntaxError, no domain error, which the A2A door answers 500.
    await whileBugged(
      () => refsReadAsBigInt(t.running.services.agents),
      () =>
        expectCaught(
          fc.asyncProperty(calls, agents, (call, agent) => answeredBelow500(call, agent)),
          { seed: SEED, numRuns: propertyRuns(RUNS) },
        ),
    );
  }, 180_000);
});
