/**
 * A fork calls the agent's provider: its key goes to the agent's base_url only, and the server's
 * OPENAI_API_KEY to OPENAI_BASE_URL only. Each provider is a local listener recording every request.
 */
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { givenAgentWithSql } from './support';

const SERVER_KEY = 'sk-server-secret-fork-0001';

describe.each(storeKinds)('fork and the secrets (%s)', (store) => {
  let t: TestApp;
  let server: FakeOpenAi;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    server = await startFakeOpenAi();
    t = await startTestApp(store, { OPENAI_API_KEY: SERVER_KEY, OPENAI_BASE_URL: server.baseUrl });
  });
  afterAll(async () => {
    await Promise.all([server, ...fakes].map((f) => f.close()));
    await t.dispose();
  });

  const askThenFork = async (model: Record<string, unknown>) => {
    const w = await givenAgentWithSql(t, null, model);
    fakes.push(w.fake);
    w.fake.setFallback(fakeReply.text('An answer.'));
    const asked = await t.http
      .post(`/api/projects/${w.project}/agents/${w.agent}/completions`)
      .send({ messages: [{ question: 'First?' }] })
      .expect(200);
    const traceId = (asked.body as { message: { trace_id: string } }).message.trace_id;
    await t.http
      .post(`/api/projects/${w.project}/agents/${w.agent}/runs/${traceId}/fork`)
      .send({ messages: [{ question: 'Then?' }] })
      .expect(200);
    return w;
  };

  it("sends the agent's own key to the agent's base_url, and nothing to the server's endpoint", async () => {
    const w = await askThenFork({});
    const chats = w.fake.requests().filter((r) => r.path === '/v1/chat/completions');
    expect(chats).toHaveLength(2);
    expect(chats.map((r) => r.headers.authorization)).toEqual([`Bearer ${w.key}`, `Bearer ${w.key}`]);
    expect(JSON.stringify(w.fake.requests())).not.toContain(SERVER_KEY);
    expect(JSON.stringify(server.requests())).not.toContain(w.key);
  });

  it('an agent without a key of its own, pointing elsewhere, gets no server key in a fork', async () => {
    const w = await askThenFork({ api_key: undefined });
    expect(w.fake.requests().length).toBe(2);
    expect(JSON.stringify(w.fake.requests())).not.toContain(SERVER_KEY);
  });
});
