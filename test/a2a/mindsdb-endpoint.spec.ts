/**
 * Issue 60 item 6: A2A as MindsDB serves it. One endpoint, `POST /a2a/`, the agent named in
 * `params.message.metadata.agentName` (`project.agent`, or a bare name in project mindsdb); MindsDB's
 * pre-1.0 methods (`tasks/send`, `tasks/sendSubscribe` over SSE, `tasks/get`, `tasks/cancel`) and the
 * v0.3 ones; the server's card at `/a2a/.well-known/agent.json` and `agent-card.json`; `/a2a/status`.
 * Each task is one recorded run (`agent-run-<task id>`, via a2a). Before this, every one was a 404.
 */
import { startTestApp, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { givenAgent, givenAgentOnProvider } from '../support/world';
import { listen, runEvents, type Listening } from './support';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const rpc = (method: string, params: Json, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, params });
const sendParams = (text: string, agentName: string | undefined, more: Json = {}) => ({
  id: 'client-task-1',
  sessionId: 'session-ada',
  message: {
    role: 'user',
    parts: [{ type: 'text', text }],
    ...(agentName === undefined ? {} : { metadata: { agentName } }),
  },
  ...more,
});

describe('A2A at MindsDB’s endpoint, POST /a2a/ (sqlite)', () => {
  let t: TestApp;
  let l: Listening;
  let provider: FakeOpenAi;
  let project: string;

  const post = async (body: unknown) => {
    const res = await fetch(`${l.url}/a2a/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    l = await listen(t);
    provider = await startFakeOpenAi();
    project = await givenAgentOnProvider(t, provider.baseUrl, 'a2am');
    // A bare agentName means project mindsdb.
    await givenAgent(t, 'mindsdb', {
      name: 'helper_default',
      model: { model_name: 'gpt-test', provider: 'openai', base_url: provider.baseUrl },
    });
  });
  afterAll(async () => {
    await provider?.close();
    await l?.close();
    await t?.dispose();
  });

  it('tasks/send with agentName project.agent: a completed task in MindsDB’s shape, recorded as one run via a2a', async () => {
    provider.when({ lastUser: 'capital of Peru' }, fakeReply.text('Lima.'));
    const { status, body } = await post(
      rpc('tasks/send', sendParams('capital of Peru', `${project}.helper`), 7),
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: {
        kind: 'task',
        sessionId: 'session-ada',
        contextId: 'session-ada',
        status: { state: 'completed', message: { role: 'agent', parts: [{ type: 'text', text: 'Lima.' }] } },
        artifacts: [{ name: 'answer', index: 0, parts: [{ type: 'text', text: 'Lima.' }] }],
      },
    });
    const taskId = body.result.id as string;
    const events = await runEvents(t, taskId);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['AgentRunStarted', 'AgentRunAnswered']),
    );
    expect(events[0]!.data).toMatchObject({
      project,
      agent: 'helper',
      via: 'a2a',
      question: 'capital of Peru',
    });

    // tasks/get by the server's id (from the log) and by the client's own id (this process remembers it).
    const got = await post(rpc('tasks/get', { id: taskId }));
    expect(got.body.result).toMatchObject({ id: taskId, status: { state: 'completed' } });
    const byClientId = await post(rpc('tasks/get', { id: 'client-task-1', historyLength: 1 }));
    expect(byClientId.body.result).toMatchObject({ id: taskId, history: [{ role: 'agent' }] });
    expect(byClientId.body.result.history).toHaveLength(1);
  });

  it('a bare agentName is an agent of project mindsdb', async () => {
    provider.when({ lastUser: 'default project question' }, fakeReply.text('From mindsdb.'));
    const { body } = await post(rpc('tasks/send', sendParams('default project question', 'helper_default')));
    expect(body.result.status.state).toBe('completed');
    expect((await runEvents(t, body.result.id as string))[0]!.data).toMatchObject({
      project: 'mindsdb',
      agent: 'helper_default',
    });
  });

  it('tasks/sendSubscribe streams SSE: status updates, the answer as an artifact, a final completed status', async () => {
    provider.when({ lastUser: 'stream me' }, fakeReply.text('Streamed.'));
    const res = await fetch(`${l.url}/a2a/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(rpc('tasks/sendSubscribe', sendParams('stream me', `${project}.helper`), 'sub-1')),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text())
      .split('\n\n')
      .filter((chunk) => chunk.startsWith('data: '))
      .map((chunk) => JSON.parse(chunk.slice('data: '.length)) as Json);
    expect(events.every((e) => e.jsonrpc === '2.0' && e.id === 'sub-1')).toBe(true);
    const results = events.map((e) => e.result as Json);
    expect(results[0]).toMatchObject({ kind: 'status-update', status: { state: 'submitted' }, final: false });
    expect(
      results.some((r) => r.kind === 'artifact-update' && r.artifact.parts[0].text === 'Streamed.'),
    ).toBe(true);
    expect(results.at(-1)).toMatchObject({
      kind: 'status-update',
      final: true,
      status: { state: 'completed', message: { parts: [{ type: 'text', text: 'Streamed.' }] } },
    });
    const taskId = results[0]!.id as string;
    expect((await runEvents(t, taskId)).map((e) => e.type)).toContain('AgentRunAnswered');
  });

  it('tasks/cancel of an ended task answers it as it ended; an unknown task is -32001', async () => {
    provider.when({ lastUser: 'quick one' }, fakeReply.text('Done.'));
    const sent = await post(rpc('tasks/send', sendParams('quick one', `${project}.helper`)));
    const cancelled = await post(rpc('tasks/cancel', { id: sent.body.result.id }));
    expect(cancelled.body.error ?? cancelled.body.result.status).toBeDefined();
    const unknown = await post(rpc('tasks/get', { id: '00000000-0000-4000-8000-000000000000' }));
    expect(unknown.body.error).toMatchObject({ code: -32001 });
  });

  it('v0.3 message/send at /a2a/ reaches the named agent too', async () => {
    provider.when({ lastUser: 'v03 question' }, fakeReply.text('v0.3 answer.'));
    const { body } = await post(
      rpc('message/send', {
        message: {
          kind: 'message',
          messageId: 'm-03',
          role: 'user',
          parts: [{ kind: 'text', text: 'v03 question' }],
          metadata: { agentName: `${project}.helper` },
        },
      }),
    );
    expect(body.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
  });

  it('a message naming no agent, or an agent that does not exist, is refused by name', async () => {
    const none = await post(rpc('tasks/send', sendParams('who?', undefined)));
    expect(none.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/agentName/) });
    const missing = await fetch(`${l.url}/a2a/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(rpc('tasks/send', sendParams('who?', `${project}.nobody`))),
    });
    expect(missing.status).toBe(404);
  });

  it('serves the server’s card at both well-known paths, and a status', async () => {
    for (const path of ['/a2a/.well-known/agent.json', '/a2a/.well-known/agent-card.json']) {
      const res = await fetch(`${l.url}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        url: `${l.url}/a2a/`,
        capabilities: { streaming: true, pushNotifications: false },
        skills: [expect.objectContaining({ id: 'ask_agent' })],
      });
    }
    const status = await fetch(`${l.url}/a2a/status`);
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({
      status: 'ok',
      endpoint: '/a2a/',
      default_project: 'mindsdb',
    });
  });
});
