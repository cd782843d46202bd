/**
 * LLM budgets hold agents too (docs/agents.md "LLM budgets"): each model call of a run is admitted
 * by the budgets of whoever asked (user, token, project) before it is made, counted with the
 * queries' LLM calls under one reckoning; a call past a limit ends the run (kind `refused`) with a
 * 403 naming the limit, no provider request made, the refusal in the log under the run's trace id.
 * And what is admitted is held until it is in the read model, so two requests started together
 * cannot both pass a limit only one fits in. Each case makes its own user, project and budget.
 */
import { storeKinds } from '../support/app';
import { fakeReply } from '../support/fakeOpenAi';
import { userWithRole } from '../auth/support';
import {
  budgetRow,
  plannedCalls,
  refusalsOf,
  sqlAs,
  startBudgetWorld,
  type BudgetWorld,
} from './llm-budgets-support';

type Problem = { status: number; title: string; detail: string };

describe.each(storeKinds)('LLM budgets hold agent runs (%s)', (store) => {
  let w: BudgetWorld;
  beforeAll(async () => {
    w = await startBudgetWorld(store);
  });
  afterAll(async () => {
    await w?.t.dispose();
    await w?.fake.close();
  });

  /** A project with an agent on the provider stand-in, and an editor who may ask it. */
  const givenAgent = async (name: string) => {
    const as = { Cookie: w.admin };
    await w.t.http
      .post('/api/projects')
      .set(as)
      .send({ name: `p_${name}` })
      .expect(201);
    await w.t.http
      .post(`/api/projects/p_${name}/agents`)
      .set(as)
      .send({
        agent: {
          name: 'ag',
          model: { model_name: 'm', provider: 'openai', api_key: 'sk-agent', base_url: w.fake.baseUrl },
        },
      })
      .expect(201);
    const editor = await userWithRole(w.t, w.admin, `u_${name}`, 'editor');
    const ask = (question: string) =>
      w.t.http
        .post(`/api/projects/p_${name}/agents/ag/completions`)
        .set('Cookie', editor.cookie)
        .send({ messages: [{ question }] });
    return { project: `p_${name}`, user: `u_${name}`, editor, ask };
  };
  /**
   * The user's LLM_BUDGETS row once the runs are in the read model (a REST completion answers
   * before it: GET …/runs catches it up).
   */
  const spentBy = async (a: { project: string; user: string }) => {
    await w.t.http.get(`/api/projects/${a.project}/agents/ag/runs`).set('Cookie', w.admin).expect(200);
    return budgetRow(w, 'user', a.user);
  };
  const budget = (using: string) => sqlAs(w.t, { cookie: w.admin }, `CREATE LLM_BUDGET FOR ${using}`);
  const traceOf = (p: Problem) => /\(trace_id ([0-9a-f-]+)\)/.exec(p.detail)?.[1];
  /** A run as information_schema.AGENT_RUNS has it, once GET …/runs has caught the read model up. */
  const runRow = async (project: string, traceId: string) => {
    await w.t.http.get(`/api/projects/${project}/agents/ag/runs`).set('Cookie', w.admin).expect(200);
    return (
      await sqlAs(
        w.t,
        { cookie: w.admin },
        `SELECT STATUS, ERROR_KIND, STEPS, USER_NAME FROM information_schema.AGENT_RUNS WHERE TRACE_ID = '${traceId}'`,
      )
    ).data?.[0];
  };

  it("counts a run's model calls against its caller's daily budget and refuses the call past it before it is made", async () => {
    const a = await givenAgent(`${store}_daily`);
    await budget(`USER ${a.user} USING calls_per_day = 2`);
    for (const q of ['first', 'second']) expect((await a.ask(q).expect(200)).body).toHaveProperty('message');
    expect(await spentBy(a)).toEqual([2, 2, null, expect.any(Number), null]);
    const before = w.fake.chatRequests().length;

    const refused = (await a.ask('third').expect(403)).body as Problem;
    const message = `agent ${a.project}.ag would make 1 calls: the LLM budget of user ${a.user} allows calls_per_day = 2 (spent today: 2); refused before any call`;
    expect(refused).toMatchObject({ status: 403, title: 'LLM budget exceeded' });
    expect(refused.detail).toContain(message);
    const traceId = traceOf(refused)!;
    expect(w.fake.chatRequests()).toHaveLength(before);
    // The run is in the log as refused after no step, and the refusal names it.
    expect(await runRow(a.project, traceId)).toEqual(['failed', 'refused', 0, a.user]);
    expect((await refusalsOf(w, a.user)).map((r) => [r.stream, r.limit, r.planned, r.spent])).toEqual([
      [`llm-query-${traceId}`, 'calls_per_day', 1, 2],
    ]);

    // The same agent asked in SQL is refused alike, with the SQL error of a budget.
    const bySql = await sqlAs(
      w.t,
      { cookie: a.editor.cookie },
      `SELECT answer FROM ${a.project}.ag WHERE question = 'fourth'`,
    );
    expect(bySql).toMatchObject({ type: 'error', error_code: 1227 });
    expect(bySql.error_message).toContain(message);
    expect(w.fake.chatRequests()).toHaveLength(before);
  });

  it("counts a run's calls and LLM()'s under one budget", async () => {
    const a = await givenAgent(`${store}_shared`);
    await budget(`USER ${a.user} USING calls_per_day = 2`);
    await a.ask('one call').expect(200);
    const before = w.fake.chatRequests().length;
    const answer = await sqlAs(w.t, { cookie: a.editor.cookie }, plannedCalls(2, `${store}-shared`));
    expect(answer).toMatchObject({
      type: 'error',
      error_code: 1227,
      error_message: `LLM() would make 2 calls: the LLM budget of user ${a.user} allows calls_per_day = 2 (spent today: 1); refused before any call`,
    });
    expect(w.fake.chatRequests()).toHaveLength(before);
  });

  it("holds one run to its project's calls_per_query: the call past it is not made", async () => {
    const a = await givenAgent(`${store}_per_run`);
    await budget(`PROJECT ${a.project} USING calls_per_query = 2`);
    // The model keeps calling a tool the agent does not have: the run would go on to its limits.
    w.fake.when({ lastUser: 'keep calling' }, fakeReply.toolCall('no_such_tool', {}));
    const before = w.fake.chatRequests().length;
    const refused = (await a.ask('keep calling').expect(403)).body as Problem;
    expect(refused.detail).toContain(
      `agent ${a.project}.ag would make 1 calls: the LLM budget of project ${a.project} allows calls_per_query = 2 (the query planned: 2); refused before any call`,
    );
    expect(w.fake.chatRequests().length - before).toBe(2);
    expect(await runRow(a.project, traceOf(refused)!)).toEqual(['failed', 'refused', 2, a.user]);
    // Another run starts afresh: per query is per run.
    w.fake.when({ lastUser: 'just answer' }, fakeReply.text('done'));
    expect((await a.ask('just answer').expect(200)).body).toMatchObject({ message: { content: 'done' } });
  });

  it('lets only one of two runs started together pass a daily limit only one fits in', async () => {
    const a = await givenAgent(`${store}_together`);
    await budget(`USER ${a.user} USING calls_per_day = 1`);
    w.fake.when({ lastUser: /^together / }, fakeReply.text('slow answer', { delayMs: 300 }));
    const before = w.fake.chatRequests().length;
    const answers = await Promise.all([a.ask('together 1'), a.ask('together 2')]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 403]);
    expect(w.fake.chatRequests().length - before).toBe(1);
    expect(await spentBy(a)).toEqual([1, 1, null, expect.any(Number), null]);
  });

  it("lets only one of two queries started together pass a daily limit only one's calls fit in", async () => {
    const a = await givenAgent(`${store}_queries`);
    await budget(`USER ${a.user} USING calls_per_day = 3`);
    w.fake.when({ lastUser: /^Say ok to .*-slow-/ }, fakeReply.text('fine', { delayMs: 200 }));
    const before = w.fake.chatRequests().length;
    const answers = await Promise.all(
      ['a', 'b'].map((k) => sqlAs(w.t, { cookie: a.editor.cookie }, plannedCalls(2, `${store}-slow-${k}`))),
    );
    expect(answers.map((x) => x.type).sort()).toEqual(['error', 'table']);
    expect(answers.find((x) => x.type === 'error')).toMatchObject({ error_code: 1227 });
    expect(w.fake.chatRequests().length - before).toBe(2);
    expect(await budgetRow(w, 'user', a.user)).toEqual([3, 2, null, expect.any(Number), null]);
  });
});
