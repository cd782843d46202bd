/**
 * A run replayed from its events: no model call (the provider stand-in counts its requests), the
 * same steps and answer as recorded, and each SQL step read again as of the position it ran at and
 * as of now: equal when the data did not change; when it did, the replay names the step.
 */
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import type { FakeOpenAi } from '../support/fakeOpenAi';
import { askWithQuery, givenAgentWithSql, replayOf, runOf, unique, type AgentWorld } from './support';

describe.each(storeKinds)('agent run replay (%s)', (store) => {
  let t: TestApp;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    await t.dispose();
  });
  const world = async (
    ...args: Parameters<typeof givenAgentWithSql> extends [TestApp, ...infer R] ? R : never
  ) => {
    const w = await givenAgentWithSql(t, ...args);
    fakes.push(w.fake);
    return w;
  };
  const chatCalls = (w: AgentWorld) => w.fake.chatRequests().length;

  it('replays an unchanged world as the original, without calling the model', async () => {
    const w = await world({ database: '$project', tables: ['skills'] });
    const traceId = await askWithQuery(
      t,
      w,
      'How many skills are there?',
      `SELECT name FROM ${w.project}.skills ORDER BY name`,
      'There is one skill.',
    );
    const calls = chatCalls(w);
    const run = await runOf(t, w, traceId);
    const replay = await replayOf(t, w, traceId);
    expect(chatCalls(w)).toBe(calls);
    expect(replay).toMatchObject({
      trace_id: traceId,
      status: 'answered',
      answer: run.answer,
      model_calls: 0,
    });
    expect(replay.steps.map((s) => [s.seq, s.kind, s.name])).toEqual(
      run.steps.map((s) => [s.seq, s.kind, s.name]),
    );
    const tool = replay.steps.find((s) => s.kind === 'tool')!;
    expect(tool.replay).toMatchObject({
      compared: 'as_of',
      differs: false,
      as_of: { rows: 1 },
      now: { rows: 1 },
    });
    expect(replay).toMatchObject({ unchanged: true, changed_steps: [] });
  });

  it('names the step whose SQL answer differs once the data changed (read as of the run, and now)', async () => {
    const w = await world({ database: '$project', tables: ['skills'] });
    const traceId = await askWithQuery(
      t,
      w,
      'Which skills are there?',
      `SELECT name FROM ${w.project}.skills ORDER BY name`,
      'One.',
    );
    await t.http
      .post(`/api/projects/${w.project}/skills`)
      .send({ skill: { name: unique('added'), type: 'sql', params: { database: 'files' } } })
      .expect(201);
    const calls = chatCalls(w);
    const replay = await replayOf(t, w, traceId);
    expect(chatCalls(w)).toBe(calls);
    const tool = replay.steps.find((s) => s.kind === 'tool')!;
    expect(tool.replay).toMatchObject({
      compared: 'as_of',
      differs: true,
      as_of: { rows: 1 },
      now: { rows: 2 },
    });
    expect(replay.changed_steps).toEqual([tool.seq]);
    expect(replay.unchanged).toBe(false);
    // The answer is the one recorded: a replay never asks again.
    expect(replay.answer).toBe('One.');
  });

  it('compares an uploaded file’s rows by count (files keep no history), and names the step when it changed', async () => {
    const file = unique('orders');
    await t.http
      .put(`/api/files/${file}`)
      .attach('file', Buffer.from('id,amount\n1,10\n2,20\n'), `${file}.csv`)
      .expect(200);
    const w = await world({ database: 'files', tables: [file] });
    const traceId = await askWithQuery(
      t,
      w,
      'How many orders?',
      `SELECT * FROM files.${file}`,
      'Two orders.',
    );
    const same = await replayOf(t, w, traceId);
    // Compared by the digest of the rows and values, recorded with the run (issue 61).
    expect(same.steps.find((s) => s.kind === 'tool')!.replay).toMatchObject({
      compared: 'digest',
      differs: false,
      now: { rows: 2 },
    });
    expect(same.unchanged).toBe(true);
    await t.http
      .put(`/api/files/${file}`)
      .attach('file', Buffer.from('id,amount\n1,10\n2,20\n3,30\n'), `${file}.csv`)
      .expect(200);
    const changed = await replayOf(t, w, traceId);
    const tool = changed.steps.find((s) => s.kind === 'tool')!;
    expect(tool.replay).toMatchObject({ compared: 'digest', differs: true, now: { rows: 3 } });
    expect(changed.changed_steps).toEqual([tool.seq]);
  });

  it('never runs again what the guard refused, nor a query that asks a model', async () => {
    const w = await world({ database: '$project', tables: ['skills'] });
    w.fake.enqueue({
      type: 'tool_calls',
      calls: [
        { name: 'sql_db_query', arguments: { query: `DROP PROJECT ${w.project}` } },
        { name: 'sql_db_query', arguments: { query: `SELECT LLM('hi') AS x FROM ${w.project}.skills` } },
      ],
    });
    w.fake.enqueue({ type: 'text', content: 'done' });
    const res = await t.http
      .post(`/api/projects/${w.project}/agents/${w.agent}/completions`)
      .send({ messages: [{ question: 'q', answer: null }] })
      .expect(200);
    const calls = chatCalls(w);
    const replay = await replayOf(t, w, (res.body as { message: { trace_id: string } }).message.trace_id);
    expect(chatCalls(w)).toBe(calls);
    const tools = replay.steps.filter((s) => s.kind === 'tool');
    expect(tools.map((s) => s.replay?.compared)).toEqual(['not_rerun', 'not_rerun']);
    await t.http.get(`/api/projects/${w.project}`).expect(200);
  });

  it('answers 404 problem+json for a run that is not this agent’s', async () => {
    const w = await world(null);
    const other = await world(null);
    w.fake.enqueue({ type: 'text', content: 'hi' });
    const res = await t.http
      .post(`/api/projects/${w.project}/agents/${w.agent}/completions`)
      .send({ messages: [{ question: 'q', answer: null }] })
      .expect(200);
    const traceId = (res.body as { message: { trace_id: string } }).message.trace_id;
    for (const path of [
      `/api/projects/${other.project}/agents/${other.agent}/runs/${traceId}/replay`,
      `/api/projects/${w.project}/agents/${w.agent}/runs/nope/replay`,
    ]) {
      const r = await t.http.get(path).expect(404);
      expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({ status: 404, title: 'Run not found' });
    }
  });
});
