/**
 * Agents over A2A (official SDK client, app on a real port): the card, `message/send` answered as a
 * completed task whose run is on its own stream (via a2a), streaming, `tasks/get` from the log (also
 * after a restart), `tasks/cancel` stopping a run, a context continuing as the agent's thread, the
 * v0.3 wire (MindsDB's clients), and the agent's key reaching only its own provider.
 */
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { givenAgentOnProvider, givenNumbersSkill } from '../support/world';
import {
  a2aClient,
  agentUrl,
  asTask,
  listen,
  runEvents,
  TaskState,
  textOf,
  userText,
  type Listening,
  type StreamResponse,
} from './support';
import { untilTrue } from '../support/until';

describe.each(storeKinds)('agents over A2A (%s)', (store) => {
  let t: TestApp;
  let l: Listening;
  let provider: FakeOpenAi;
  let elsewhere: FakeOpenAi;
  const KEY = `sk-a2a-${store}-stored-key-0042`;

  /** A project with an agent `helper` on `fake`, holding `key` (none: no key stored). */
  const givenAgent = (fake: FakeOpenAi, key?: string) => givenAgentOnProvider(t, fake.baseUrl, 'a2a', key);

  beforeAll(async () => {
    t = await startTestApp(store);
    l = await listen(t);
    provider = await startFakeOpenAi();
    elsewhere = await startFakeOpenAi();
  });
  afterAll(async () => {
    await provider?.close();
    await elsewhere?.close();
    await l?.close();
    await t?.dispose();
  });

  it('serves the card at the well-known path: name, skills, protocol version, streaming', async () => {
    const project = await givenAgent(provider, KEY);
    await t.http
      .post(`/api/projects/${project}/skills`)
      .send({
        skill: {
          name: 'sales',
          type: 'sql',
          params: { database: 'files', tables: [], description: 'sales figures' },
        },
      })
      .expect(201);
    await t.http
      .put(`/api/projects/${project}/agents/helper`)
      .send({ agent: { skills_to_add: ['sales'] } })
      .expect(200);
    const client = await a2aClient(agentUrl(l.url, project, 'helper'));
    const card = await client.getAgentCard();
    expect(card).toMatchObject({
      name: 'helper',
      capabilities: { streaming: true, pushNotifications: false },
      skills: [
        expect.objectContaining({ id: 'sales', name: 'sales', description: 'sales figures', tags: ['sql'] }),
      ],
    });
    // Sign-in is off here: no scheme is required (test/a2a/auth.spec.ts has the bearer one).
    expect(card.securityRequirements ?? []).toEqual([]);
    expect(card.supportedInterfaces).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          url: agentUrl(l.url, project, 'helper'),
          protocolBinding: 'JSONRPC',
          protocolVersion: '1.0',
        }),
        expect.objectContaining({ protocolVersion: '0.3' }),
      ]),
    );
    expect(JSON.stringify(card)).not.toContain(KEY);
    // An unknown agent has no card.
    await t.http.get(`/a2a/${project}/nobody/.well-known/agent-card.json`).expect(404);
  });

  it('answers message/send with a completed task; the run is on its own stream, via a2a', async () => {
    const project = await givenAgent(provider, KEY);
    provider.when({ lastUser: 'capital of France' }, fakeReply.text('Paris.'));
    const client = await a2aClient(agentUrl(l.url, project, 'helper'));
    const task = asTask(
      await client.sendMessage({
        tenant: '',
        message: userText('What is the capital of France?'),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status?.message)).toBe('Paris.');
    expect(
      task.artifacts.map((a) =>
        a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(''),
      ),
    ).toEqual(['Paris.']);
    const events = await runEvents(t, task.id);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['AgentRunStarted', 'AgentRunAnswered']),
    );
    const started = events.find((e) => e.type === 'AgentRunStarted')!;
    expect(started.data).toMatchObject({
      traceId: task.id,
      via: 'a2a',
      project,
      agent: 'helper',
      threadId: task.contextId,
    });
    // tasks/get answers the same task, from the log.
    const got = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(got.status?.message)).toBe('Paris.');
  });

  it('streams a status update per step, the answer as an artifact, then the completed state', async () => {
    const project = await givenAgent(provider, KEY);
    const file = await givenNumbersSkill(t, project);
    provider.when(
      { lastUser: 'sum of the numbers' },
      (body) =>
        body.messages.some((m) => m.role === 'tool')
          ? fakeReply.text('The sum is 6.')
          : fakeReply.toolCall('sql_db_query', { query: `SELECT sum(n) AS s FROM files.${file}` }),
      { times: 2 },
    );
    const client = await a2aClient(agentUrl(l.url, project, 'helper'));
    const seen: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({
      tenant: '',
      message: userText('What is the sum of the numbers?'),
      configuration: undefined,
      metadata: undefined,
    }))
      seen.push(event);
    const kinds = seen.map((e) => e.payload?.$case);
    expect(kinds[0]).toBe('task');
    const updates = seen.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [e.payload.value] : []));
    expect(updates.map((u) => textOf(u.status?.message))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/step 1: asking the model/),
        expect.stringMatching(/calling sql_db_query/),
        expect.stringMatching(/sql_db_query answered/),
      ]),
    );
    const last = updates.at(-1)!;
    expect(last.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(last.status?.message)).toBe('The sum is 6.');
    const artifact = seen.flatMap((e) =>
      e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : [],
    )[0]!;
    expect(artifact.artifact?.parts[0]?.content).toEqual({ $case: 'text', value: 'The sum is 6.' });
    expect(artifact.artifact?.parts[1]?.content).toMatchObject({
      $case: 'data',
      value: { sql: [expect.stringContaining('sum(n)')] },
    });
    // Every step of the run is on its stream.
    const events = await runEvents(t, last.taskId);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['AgentRunStarted', 'AgentRunToolCalled', 'AgentRunAnswered']),
    );
  });

  it('continues a conversation in its context: the agent thread remembers the earlier turn', async () => {
    const project = await givenAgent(provider, KEY);
    provider.when({ lastUser: 'My name is Ada' }, fakeReply.text('Nice to meet you, Ada.'));
    provider.when({ lastUser: 'What is my name' }, (body) =>
      fakeReply.text(
        body.messages.some((m) => String(m.content).includes('My name is Ada'))
          ? 'You are Ada.'
          : 'I do not know.',
      ),
    );
    const client = await a2aClient(agentUrl(l.url, project, 'helper'));
    const contextId = `conversation-${store}-1`;
    const first = asTask(
      await client.sendMessage({
        tenant: '',
        message: userText('My name is Ada', { contextId }),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    const second = asTask(
      await client.sendMessage({
        tenant: '',
        message: userText('What is my name?', { contextId }),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    expect([first.contextId, second.contextId]).toEqual([contextId, contextId]);
    expect(second.id).not.toBe(first.id);
    expect(textOf(second.status?.message)).toBe('You are Ada.');
    // A message naming a task is refused: a task is one run.
    await expect(
      client.sendMessage({
        tenant: '',
        message: { ...userText('more', { contextId }), taskId: first.id },
        configuration: undefined,
        metadata: undefined,
      }),
    ).rejects.toThrow(/one run of the agent/);
  });

  it('stops a cancelled task: the run fails aborted on its stream, the task is canceled (from the log)', async () => {
    const project = await givenAgent(provider, KEY);
    provider.when({ lastUser: 'think forever' }, fakeReply.hang());
    const client = await a2aClient(agentUrl(l.url, project, 'helper'));
    const submitted = asTask(
      await client.sendMessage({
        tenant: '',
        message: userText('Please think forever'),
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: undefined,
          returnImmediately: true,
        },
        metadata: undefined,
      }),
    );
    await untilTrue('the run to start', async () =>
      (await runEvents(t, submitted.id)).some((e) => e.type === 'AgentRunStarted'),
    );
    expect(
      (await client.getTask({ tenant: '', id: submitted.id, historyLength: undefined })).status?.state,
    ).toBe(TaskState.TASK_STATE_WORKING);
    const cancelled = await client.cancelTask({ tenant: '', id: submitted.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const failed = (await runEvents(t, submitted.id)).find((e) => e.type === 'AgentRunFailed');
    expect(failed?.data).toMatchObject({ kind: 'aborted' });
    expect(
      (await client.getTask({ tenant: '', id: submitted.id, historyLength: undefined })).status?.state,
    ).toBe(TaskState.TASK_STATE_CANCELED);
    // A finished task cannot be cancelled.
    await expect(
      client.cancelTask({ tenant: '', id: submitted.id, metadata: undefined }),
    ).resolves.toMatchObject({ id: submitted.id });
  });

  it('speaks v0.3 JSON-RPC (message/send, tasks/get without A2A-Version), as MindsDB clients do', async () => {
    const project = await givenAgent(provider, KEY);
    provider.when({ lastUser: 'legacy question' }, fakeReply.text('Legacy answer.'));
    const rpc = async (method: string, params: unknown) => {
      const res = await fetch(agentUrl(l.url, project, 'helper'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { result?: Record<string, unknown>; error?: unknown };
    };
    const sent = await rpc('message/send', {
      message: {
        kind: 'message',
        role: 'user',
        messageId: 'legacy-1',
        parts: [{ kind: 'text', text: 'A legacy question' }],
      },
    });
    expect(sent.result).toMatchObject({
      kind: 'task',
      status: {
        state: 'completed',
        message: { role: 'agent', parts: [{ kind: 'text', text: 'Legacy answer.' }] },
      },
      artifacts: [{ parts: [{ kind: 'text', text: 'Legacy answer.' }] }],
    });
    const got = await rpc('tasks/get', { id: sent.result!.id });
    expect(got.result).toMatchObject({ id: sent.result!.id, status: { state: 'completed' } });
  });

  it('sends the stored key to its provider only: not into the task, the log, nor another provider', async () => {
    const withKey = await givenAgent(provider, KEY);
    const withoutKey = await givenAgent(elsewhere);
    provider.when({ lastUser: 'secret-check' }, fakeReply.text('fine'));
    elsewhere.when({ lastUser: 'secret-check' }, fakeReply.text('also fine'));
    const tasks = [];
    for (const project of [withKey, withoutKey]) {
      const client = await a2aClient(agentUrl(l.url, project, 'helper'));
      tasks.push(
        asTask(
          await client.sendMessage({
            tenant: '',
            message: userText(`secret-check ${project}`),
            configuration: undefined,
            metadata: undefined,
          }),
        ),
      );
    }
    expect(tasks.map((task) => task.status?.state)).toEqual([
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_COMPLETED,
    ]);
    const sentTo = (fake: FakeOpenAi) =>
      fake
        .requests()
        .filter((r) => JSON.stringify(r.body).includes('secret-check'))
        .map((r) => r.headers.authorization ?? '');
    expect(sentTo(provider)).toEqual([`Bearer ${KEY}`]);
    expect(sentTo(elsewhere).every((h) => !h.includes(KEY))).toBe(true);
    for (const task of tasks) {
      expect(JSON.stringify(task)).not.toContain(KEY);
      expect(JSON.stringify((await runEvents(t, task.id)).map((e) => e.data))).not.toContain(KEY);
    }
  });

  it('answers tasks/get from the log after a restart (no memory of the task survives one)', async () => {
    const project = await givenAgent(provider, KEY);
    provider.when({ lastUser: 'before the restart' }, fakeReply.text('Remembered.'));
    const before = asTask(
      await (
        await a2aClient(agentUrl(l.url, project, 'helper'))
      ).sendMessage({
        tenant: '',
        message: userText('Asked before the restart'),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    await l.close();
    t = await t.restart();
    l = await listen(t);
    const client = await a2aClient(agentUrl(l.url, project, 'helper'));
    const after = await client.getTask({ tenant: '', id: before.id, historyLength: undefined });
    expect(after).toMatchObject({ id: before.id, contextId: before.contextId });
    expect(after.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(after.status?.message)).toBe('Remembered.');
    expect(after.history.map(textOf)).toEqual(['Asked before the restart', 'Remembered.']);
    // An unknown or malformed id is no task.
    await expect(
      client.getTask({ tenant: '', id: '00000000-0000-4000-8000-000000000000', historyLength: undefined }),
    ).rejects.toThrow(/not found/i);
    await expect(client.getTask({ tenant: '', id: 'not-a-uuid', historyLength: undefined })).rejects.toThrow(
      /not found/i,
    );
  });
});
