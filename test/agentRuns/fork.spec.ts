/**
 * Continuing a conversation from an earlier turn (fork): a new thread holding the conversation up to
 * that run, then the new question asked in it; the original thread untouched; all of it on the
 * thread and run streams agent runs already use.
 */
import { threadStream } from '../../src/agentRuns/state';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, lastUserText, type FakeOpenAi } from '../support/fakeOpenAi';
import { eventsOf, givenAgentWithSql, unique, type AgentWorld } from './support';

describe.each(storeKinds)('agent run fork (%s)', (store) => {
  let t: TestApp;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    await t.dispose();
  });
  const world = async () => {
    const w = await givenAgentWithSql(t, null);
    fakes.push(w.fake);
    return w;
  };
  const ask = async (w: AgentWorld, question: string, answer: string, threadId?: string) => {
    w.fake.enqueue(fakeReply.text(answer));
    const res = await t.http
      .post(`/api/projects/${w.project}/agents/${w.agent}/completions`)
      .send({ messages: [{ question, answer: null }], ...(threadId ? { thread_id: threadId } : {}) })
      .expect(200);
    return (res.body as { message: { trace_id: string } }).message.trace_id;
  };
  const fork = (w: AgentWorld, traceId: string, body: object) =>
    t.http.post(`/api/projects/${w.project}/agents/${w.agent}/runs/${traceId}/fork`).send(body);

  it('continues from an earlier turn of a thread: the model sees the turns up to it, not the later ones', async () => {
    const w = await world();
    const thread = unique('trip');
    const first = await ask(w, 'Capital of France?', 'Paris.', thread);
    await ask(w, 'How many live there?', 'About two million.', thread);
    w.fake.enqueue(fakeReply.text('The Seine.'));
    const res = await fork(w, first, { messages: [{ question: 'Which river runs through it?' }] }).expect(
      200,
    );
    expect(res.body).toMatchObject({
      message: { content: 'The Seine.', role: 'assistant', trace_id: expect.any(String) },
      thread_id: expect.stringMatching(/^fork-/),
      forked_from: { trace_id: first, thread_id: thread, turns: 1, history_not_kept: 0 },
    });
    const sent = w.fake.chatRequests().at(-1)!;
    expect(sent.messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content])).toEqual([
      ['user', 'Capital of France?'],
      ['assistant', 'Paris.'],
      ['user', 'Which river runs through it?'],
    ]);
    expect(lastUserText(sent)).toBe('Which river runs through it?');

    const forked = (res.body as { thread_id: string }).thread_id;
    const copied = await eventsOf(t, threadStream(w.project, w.agent, forked));
    expect(copied.map((e) => [e.type, e.data.question, e.data.traceId])).toEqual([
      ['AgentThreadTurn', 'Capital of France?', first],
      [
        'AgentThreadTurn',
        'Which river runs through it?',
        (res.body as { message: { trace_id: string } }).message.trace_id,
      ],
    ]);
    // The original thread is as it was.
    const original = await eventsOf(t, threadStream(w.project, w.agent, thread));
    expect(original.map((e) => e.data.question)).toEqual(['Capital of France?', 'How many live there?']);
    // And the fork goes on as any thread does.
    w.fake.enqueue(fakeReply.text('Yes.'));
    await t.http
      .post(`/api/projects/${w.project}/agents/${w.agent}/completions`)
      .send({ messages: [{ question: 'Is it long?' }], thread_id: forked })
      .expect(200);
    expect(
      w.fake
        .chatRequests()
        .at(-1)!
        .messages.filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['Capital of France?', 'Which river runs through it?', 'Is it long?']);
  });

  it('forks a run asked without a thread from its own question and answer, into the thread_id asked for', async () => {
    const w = await world();
    const run = await ask(w, 'Two plus two?', 'Four.');
    w.fake.enqueue(fakeReply.text('Eight.'));
    const thread = unique('mine');
    const res = await fork(w, run, { messages: [{ question: 'Doubled?' }], thread_id: thread }).expect(200);
    expect(res.body).toMatchObject({
      thread_id: thread,
      forked_from: { trace_id: run, thread_id: null, turns: 1 },
    });
    // The same thread again: a fork starts a new one.
    const again = await fork(w, run, { messages: [{ question: 'Again?' }], thread_id: thread }).expect(409);
    expect(again.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(again.body).toMatchObject({ status: 409, detail: expect.stringContaining(thread) });
  });

  it('refuses bad input with problem+json and appends nothing', async () => {
    const w = await world();
    const run = await ask(w, 'Hello?', 'Hi.');
    const calls = w.fake.chatRequests().length;
    const thread = unique('never');
    for (const [body, status] of [
      [{}, 400],
      [{ messages: [] }, 400],
      [{ messages: 'nope', thread_id: thread }, 400],
      [{ messages: [{ question: 'x' }], thread_id: '' }, 400],
    ] as const) {
      const res = await fork(w, run, body);
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
    }
    await fork(w, 'no-such-run', { messages: [{ question: 'x' }] }).expect(404);
    expect(w.fake.chatRequests().length).toBe(calls);
    expect(await eventsOf(t, threadStream(w.project, w.agent, thread))).toEqual([]);
  });

  it('refuses to continue a run that gave no answer (409)', async () => {
    const w = await world();
    w.fake.enqueue(fakeReply.serverError(400));
    const failed = await t.http
      .post(`/api/projects/${w.project}/agents/${w.agent}/completions`)
      .send({ messages: [{ question: 'Will this fail?' }] });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    const runs = (await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/runs`).expect(200)).body as {
      trace_id: string;
      status: string;
    }[];
    const traceId = runs.find((r) => r.status === 'failed')!.trace_id;
    const res = await fork(w, traceId, { messages: [{ question: 'And now?' }] }).expect(409);
    expect(res.body).toMatchObject({ status: 409, title: 'Run not answered' });
  });
});
