/**
 * LLM spend budgets (docs/llm-models.md "Budgets"): set by an admin in SQL or REST on their own
 * stream, shown in information_schema.LLM_BUDGETS beside what was spent today; a query whose planned
 * calls would pass its caller's limit (user, token or project; the tightest named) is refused before
 * the provider gets any request, and the refusal is an event beside the calls. Both stores.
 */
import { storeKinds } from '../support/app';
import { rebuildDifferences } from '../support/promise-rebuild';
import { projectToken, userWithRole } from '../auth/support';
import {
  budgetEvents,
  budgetRow,
  plannedCalls,
  refusalsOf,
  SERVER_CAP,
  sqlAs,
  startBudgetWorld,
  type BudgetWorld,
} from './llm-budgets-support';

describe.each(storeKinds)('LLM budgets (%s)', (kind) => {
  let w: BudgetWorld;
  beforeAll(async () => {
    w = await startBudgetWorld(kind);
  });
  afterAll(async () => {
    await w?.t.dispose();
    await w?.fake.close();
  });
  const admin = () => ({ cookie: w.admin });
  const requests = () => w.fake.chatRequests().length;

  it('is set, listed and dropped by an admin in SQL and REST, each change an event on llm-budgets', async () => {
    await userWithRole(w.t, w.admin, 'bud_set', 'analyst');
    expect(
      await sqlAs(
        w.t,
        admin(),
        'CREATE LLM_BUDGET FOR USER bud_set USING calls_per_day = 7, tokens_per_day = 900',
      ),
    ).toMatchObject({ type: 'ok' });
    expect(await budgetRow(w, 'user', 'bud_set')).toEqual([7, 0, 900, 0, null]);

    const put = await w.t.http
      .put('/api/llm/budgets/project/p_set')
      .set('Cookie', w.admin)
      .send({ calls_per_query: 40 })
      .expect(200);
    expect(put.body).toMatchObject({
      scope: 'project',
      subject: 'p_set',
      calls_per_day: null,
      calls_per_query: 40,
      calls_today: 0,
    });
    const listed = (await w.t.http.get('/api/llm/budgets').set('Cookie', w.admin).expect(200)).body as {
      scope: string;
      subject: string;
    }[];
    expect(listed.map((b) => `${b.scope}:${b.subject}`)).toEqual(
      expect.arrayContaining(['user:bud_set', 'project:p_set']),
    );

    expect(await sqlAs(w.t, admin(), 'DROP LLM_BUDGET FOR PROJECT p_set')).toMatchObject({ type: 'ok' });
    await w.t.http.delete('/api/llm/budgets/project/p_set').set('Cookie', w.admin).expect(404);
    expect(await sqlAs(w.t, admin(), 'DROP LLM_BUDGET IF EXISTS FOR PROJECT p_set')).toMatchObject({
      type: 'ok',
    });
    expect(await budgetRow(w, 'project', 'p_set')).toBeUndefined();

    const logged = (await budgetEvents(w)).filter((e) =>
      ['bud_set', 'p_set'].includes(String(e.data.subject)),
    );
    // Each change is the admin's, stamped on the event.
    expect(new Set(logged.map((e) => e.actor))).toEqual(new Set([expect.stringMatching(/^user:\d+$/)]));
    expect(logged.map((e) => [e.type, e.data.scope, e.data.subject, e.data.callsPerDay ?? null])).toEqual([
      ['LlmBudgetSet', 'user', 'bud_set', 7],
      ['LlmBudgetSet', 'project', 'p_set', null],
      ['LlmBudgetDropped', 'project', 'p_set', null],
    ]);
  });

  it("refuses a query that would pass a user's calls per day before any call, naming the limit; within it, spent grows", async () => {
    const u = await userWithRole(w.t, w.admin, 'bud_day', 'analyst');
    await sqlAs(w.t, admin(), 'CREATE LLM_BUDGET FOR USER bud_day USING calls_per_day = 3');

    const before = requests();
    const refused = await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(4, 'day-a'));
    expect(refused).toMatchObject({
      type: 'error',
      error_code: 1227,
      error_message:
        'LLM() would make 4 calls: the LLM budget of user bud_day allows calls_per_day = 3 (spent today: 0); refused before any call',
    });
    expect(requests()).toBe(before);

    expect(await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(2, 'day-b'))).toMatchObject({ type: 'table' });
    expect(requests()).toBe(before + 2);
    expect((await budgetRow(w, 'user', 'bud_day'))?.slice(0, 2)).toEqual([3, 2]);

    const again = await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(2, 'day-c'));
    expect(again.error_message).toBe(
      'LLM() would make 2 calls: the LLM budget of user bud_day allows calls_per_day = 3 (spent today: 2); refused before any call',
    );
    expect(requests()).toBe(before + 2);

    const refusals = await refusalsOf(w, 'bud_day');
    expect(refusals.map((r) => [r.scope, r.subject, r.limit, r.allowed, r.spent, r.planned, r.via])).toEqual([
      ['user', 'bud_day', 'calls_per_day', 3, 0, 4, 'sql'],
      ['user', 'bud_day', 'calls_per_day', 3, 2, 2, 'sql'],
    ]);
    expect(refusals.every((r) => r.stream.startsWith('llm-query-') && r.caller.role === 'analyst')).toBe(
      true,
    );
  });

  it("holds a token to its own budget, and not the same user's session", async () => {
    const u = await userWithRole(w.t, w.admin, 'bud_tok', 'analyst');
    const token = await projectToken(w.t, u.cookie, null);
    const tokenId = /^mlt_([A-Za-z0-9_-]{16})_/.exec(token)![1]!;
    expect(
      await sqlAs(w.t, admin(), `CREATE LLM_BUDGET FOR TOKEN '${tokenId}' USING calls_per_day = 1`),
    ).toMatchObject({ type: 'ok' });

    const before = requests();
    const refused = await sqlAs(w.t, { bearer: token }, plannedCalls(2, 'tok-a'));
    expect(refused.error_message).toBe(
      `LLM() would make 2 calls: the LLM budget of token ${tokenId} allows calls_per_day = 1 (spent today: 0); refused before any call`,
    );
    expect(requests()).toBe(before);
    expect(await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(2, 'tok-a'))).toMatchObject({ type: 'table' });
    expect(requests()).toBe(before + 2);
    expect((await refusalsOf(w, 'bud_tok')).map((r) => [r.scope, r.subject, r.caller.actor])).toEqual([
      ['token', tokenId, `token:${tokenId}`],
    ]);
  });

  it("holds a project's queries to its budget, and names the tightest of the budgets that apply", async () => {
    const u = await userWithRole(w.t, w.admin, 'bud_tight', 'editor');
    expect(await sqlAs(w.t, admin(), 'CREATE PROJECT p_tight')).toMatchObject({ type: 'ok' });
    await sqlAs(
      w.t,
      admin(),
      'CREATE LLM_BUDGET FOR USER bud_tight USING calls_per_day = 50, tokens_per_day = 100000',
    );
    await sqlAs(w.t, admin(), 'CREATE LLM_BUDGET FOR PROJECT p_tight USING calls_per_day = 2');

    const before = requests();
    const inProject = await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(3, 'tight-a'), 'p_tight');
    expect(inProject.error_message).toBe(
      'LLM() would make 3 calls: the LLM budget of project p_tight allows calls_per_day = 2 (spent today: 0); refused before any call',
    );
    expect(requests()).toBe(before);
    // Elsewhere only the user's budget holds: the same query runs.
    expect(await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(3, 'tight-a'))).toMatchObject({
      type: 'table',
    });
    expect(requests()).toBe(before + 3);

    // A tokens limit tighter than both: the estimate (four prompt characters a token) passes it.
    await sqlAs(
      w.t,
      admin(),
      'CREATE OR REPLACE LLM_BUDGET FOR USER bud_tight WITH calls_per_day = 50, tokens_per_day = 5',
    );
    const byTokens = await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(1, 'tight-b'), 'p_tight');
    expect(byTokens.error_message).toMatch(
      /^LLM\(\) would make \d+ estimated tokens: the LLM budget of user bud_tight allows tokens_per_day = 5 \(spent today: \d+\)/,
    );
    expect(requests()).toBe(before + 3);
    expect((await refusalsOf(w, 'bud_tight')).map((r) => [r.scope, r.limit])).toEqual([
      ['project', 'calls_per_day'],
      ['user', 'tokens_per_day'],
    ]);
  });

  it('lets a per-query budget raise (or lower) the server cap, LLM_SQL_MAX_CALLS', async () => {
    const u = await userWithRole(w.t, w.admin, 'bud_query', 'analyst');
    const before = requests();
    const capped = await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(SERVER_CAP + 3, 'query-a'));
    expect(capped).toMatchObject({ type: 'error' });
    expect(capped.error_message).toContain(`a query may make at most ${SERVER_CAP} (LLM_SQL_MAX_CALLS)`);
    expect(requests()).toBe(before);

    await sqlAs(w.t, admin(), 'CREATE LLM_BUDGET FOR USER bud_query USING calls_per_query = 20');
    const raised = await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(SERVER_CAP + 3, 'query-a'));
    expect(raised).toMatchObject({ type: 'table' });
    expect(raised.data).toHaveLength(SERVER_CAP + 3);
    expect(requests()).toBe(before + SERVER_CAP + 3);

    await sqlAs(w.t, admin(), 'CREATE OR REPLACE LLM_BUDGET FOR USER bud_query USING calls_per_query = 1');
    const lowered = await sqlAs(w.t, { cookie: u.cookie }, plannedCalls(2, 'query-b'));
    expect(lowered.error_message).toBe(
      'LLM() would make 2 calls: the LLM budget of user bud_query allows calls_per_query = 1 (the query planned: 0); refused before any call',
    );
    expect((await refusalsOf(w, 'bud_query')).map((r) => [r.scope, r.subject, r.limit, r.allowed])).toEqual([
      ['server', null, 'calls_per_query', SERVER_CAP],
      ['user', 'bud_query', 'calls_per_query', 1],
    ]);
  });

  it('rebuilds the budgets (and the calls they count) from the log, equal to the live read model', async () => {
    expect(await rebuildDifferences(w.t, 3)).toEqual([]);
  });
});
