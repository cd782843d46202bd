/**
 * EVALUATE AGENT (docs/agents.md "Evaluating an agent"): a hand-made test set of six questions asked
 * of an agent whose provider stand-in answers each the same way every time, scored by each method;
 * the scores below are worked out by hand from the answers and the expected values, then asserted
 * exactly. Each evaluation is one AgentEvaluated event on the agent's evaluations stream, listed in
 * information_schema; two versions of the agent compare case by case; a failing case's run replays
 * without calling the model; a rebuilt read model equals the live one.
 */
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { rebuildDifferences } from '../support/promise-rebuild';
import { eventsOf, givenAgentWithSql, replayOf, sqlOk, type AgentWorld } from '../agentRuns/support';

/** The agent's answer to each question (what its stand-in says), and what the test set expects. */
const CASES = [
  // exact ✓ (case and spaces normalised), contains ✓, numeric ✗ (no number)
  { question: 'What is the capital of France?', answer: '  PARIS ', expected: 'Paris' },
  // exact ✗, contains ✓, numeric ✓ (2 = 2)
  { question: 'How many moons has Mars?', answer: 'Mars has 2 moons.', expected: '2' },
  // exact ✗, contains ✓ ("3.14" is in "3.14159"), numeric ✓ at 0.01 (|3.14159 - 3.14| = 0.00159)
  { question: 'What is pi to two places?', answer: 'About 3.14159', expected: '3.14' },
  // exact ✗, contains ✓, numeric ✗ (no number)
  { question: 'Which is the largest planet?', answer: 'Jupiter is the largest planet', expected: 'Jupiter' },
  // exact ✗, contains ✓ ("100" is in "100.4"), numeric ✗ at 0.01 (|100.4 - 100| = 0.4), ✓ at 0.5
  { question: 'At what Celsius does water boil?', answer: '100.4 degrees', expected: '100' },
  // exact ✗, contains ✗, numeric ✗: the failing case of every method
  { question: 'Who wrote Hamlet?', answer: 'Christopher Marlowe', expected: 'William Shakespeare' },
] as const;

const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;
/** The test set as a SELECT (the statement's `FROM (SELECT …)`). */
const TEST_SET = CASES.map(
  (c) => `SELECT ${lit(c.question)} AS question, ${lit(c.expected)} AS expected_answer`,
).join(' UNION ALL ');

type Summary = {
  id: number;
  agent: string;
  agent_version: number;
  scoring: string;
  cases: number;
  passed: number;
  pass_rate: number;
  mean_score: number;
};

const summaryOf = (answer: Awaited<ReturnType<typeof querySql>>) => {
  if (answer.type !== 'table') throw new Error(`EVALUATE AGENT: ${answer.error_message}`);
  expect(answer.data).toHaveLength(1);
  return Object.fromEntries(answer.column_names!.map((n, i) => [n, answer.data![0]![i]])) as Summary;
};

describe.each(storeKinds)('EVALUATE AGENT (%s)', (store) => {
  let t: TestApp;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    await t.dispose();
  });

  /** An agent (no skills) whose stand-in answers each of CASES' questions with its answer. */
  const givenScriptedAgent = async () => {
    const w = await givenAgentWithSql(t, null);
    fakes.push(w.fake);
    for (const c of CASES) w.fake.when({ lastUser: c.question, model: 'gpt-test' }, fakeReply.text(c.answer));
    return w;
  };
  const agentIdOf = async (w: AgentWorld) =>
    ((await t.http.get(`/api/projects/${w.project}/agents/${w.agent}`).expect(200)).body as { id: number })
      .id;
  const evaluate = async (w: AgentWorld, using: string, from = `(${TEST_SET})`) =>
    summaryOf(await querySql(t, `EVALUATE AGENT ${w.project}.${w.agent} FROM ${from} USING ${using}`));
  const casesOf = async (id: number) =>
    (
      await sqlOk(
        t,
        `SELECT CASE_NUMBER, ANSWER, SCORE, PASSED, TRACE_ID FROM information_schema.AGENT_EVALUATION_CASES WHERE EVALUATION_ID = ${id} ORDER BY CASE_NUMBER`,
      )
    ).data as [number, string, number, boolean, string][];

  it('scores each method as worked out by hand: exact 1/6, contains 5/6, numeric 2/6 (±0.01) and 3/6 (±0.5)', async () => {
    const w = await givenScriptedAgent();
    const exact = await evaluate(w, "scoring = 'exact'");
    expect(exact).toMatchObject({ agent: w.agent, scoring: 'exact', cases: 6, passed: 1 });
    expect(exact.pass_rate).toBeCloseTo(1 / 6, 12);
    expect(exact.mean_score).toBeCloseTo(1 / 6, 12);
    expect((await casesOf(exact.id)).map((c) => c[3])).toEqual([true, false, false, false, false, false]);

    const contains = await evaluate(w, "scoring = 'contains'");
    expect(contains).toMatchObject({ scoring: 'contains', cases: 6, passed: 5 });
    expect(contains.pass_rate).toBeCloseTo(5 / 6, 12);
    expect((await casesOf(contains.id)).map((c) => c[3])).toEqual([true, true, true, true, true, false]);

    const numeric = await evaluate(w, "scoring = 'numeric', tolerance = 0.01");
    expect(numeric).toMatchObject({ scoring: 'numeric', cases: 6, passed: 2 });
    expect((await casesOf(numeric.id)).map((c) => c[3])).toEqual([false, true, true, false, false, false]);

    const loose = await evaluate(w, "scoring = 'numeric', tolerance = 0.5");
    expect(loose).toMatchObject({ passed: 3 });
    expect((await casesOf(loose.id)).map((c) => c[3])).toEqual([false, true, true, false, true, false]);

    // Each case was a run of the agent: 4 evaluations × 6 questions, each one model call.
    expect(w.fake.chatRequests()).toHaveLength(24);
    const cases = await casesOf(exact.id);
    expect(cases.map((c) => c[1])).toEqual(CASES.map((c) => c.answer));
    for (const [, , , , traceId] of cases) {
      const run = await t.http
        .get(`/api/projects/${w.project}/agents/${w.agent}/runs/${traceId}`)
        .expect(200);
      expect(run.body).toMatchObject({ trace_id: traceId });
    }

    const doors = await sqlOk(
      t,
      `SELECT DISTINCT VIA FROM information_schema.AGENT_RUNS WHERE TRACE_ID IN (${cases.map((c) => lit(c[4])).join(', ')})`,
    );
    expect(doors.data).toEqual([['evaluation']]);

    // The log: one AgentEvaluated per evaluation, on the agent's evaluations stream, with its cases.
    const agentId = await agentIdOf(w);
    const events = await eventsOf(t, `agent-evaluations-${agentId}`);
    expect(events.map((e) => e.type)).toEqual(Array(4).fill('AgentEvaluated'));
    expect(events[0]!.data).toMatchObject({
      agentId,
      name: w.agent,
      scoring: 'exact',
      tolerance: null,
      passed: 1,
      cases: CASES.map((c, i) => ({
        question: c.question,
        expected: c.expected,
        answer: c.answer,
        score: i === 0 ? 1 : 0,
        passed: i === 0,
        traceId: cases[i]![4],
        error: null,
      })),
    });
    expect(events[2]!.data).toMatchObject({ scoring: 'numeric', tolerance: 0.01 });
    expect(await rebuildDifferences(t, 7)).toEqual([]);
  });

  it('llm_judge asks the judge through the LLM calls (recorded), each case scored by its reply: 5/6, mean 4.6/6', async () => {
    const w = await givenScriptedAgent();
    const judge = await startFakeOpenAi();
    fakes.push(judge);
    // The judge scores the wrong author 10 of 100, every other answer 90 of 100.
    judge.when({ lastUser: 'Christopher Marlowe' }, fakeReply.text('10'));
    judge.setFallback(fakeReply.text('90'));
    // A judge the server cannot reach is refused before the agent is asked anything.
    const refused = await querySql(
      t,
      `EVALUATE AGENT ${w.project}.${w.agent} FROM (${TEST_SET}) USING scoring = 'llm_judge', rubric = 'r', llm = {"provider": "no_such_provider"}`,
    );
    expect(refused).toMatchObject({ type: 'error' });
    expect(refused.error_message).toMatch(
      new RegExp(`^EVALUATE AGENT ${w.project}\\.${w.agent}: .*no_such_provider`),
    );
    expect(w.fake.chatRequests()).toHaveLength(0);
    const llm = `{"provider": "openai", "model_name": "judge-model", "api_key": "sk-judge", "base_url": "${judge.baseUrl}"}`;
    const judged = await evaluate(
      w,
      `scoring = 'llm_judge', rubric = 'Is the answer factually the expected one?', llm = ${llm}`,
    );
    expect(judged).toMatchObject({ scoring: 'llm_judge', cases: 6, passed: 5 });
    expect(judged.mean_score).toBeCloseTo((5 * 0.9 + 0.1) / 6, 12);
    expect((await casesOf(judged.id)).map((c) => c[2])).toEqual([0.9, 0.9, 0.9, 0.9, 0.9, 0.1]);
    // Every prompt carried the rubric, the expected answer and the agent's.
    const prompts = JSON.stringify(judge.chatRequests());
    expect(prompts).toContain('Is the answer factually the expected one?');
    expect(prompts).toContain('Expected answer: William Shakespeare');
    const listed = await sqlOk(
      t,
      `SELECT SCORING, RUBRIC, JUDGE_PROVIDER, JUDGE_MODEL, PASSED FROM information_schema.AGENT_EVALUATIONS WHERE ID = ${judged.id}`,
    );
    expect(listed.data).toEqual([
      ['llm_judge', 'Is the answer factually the expected one?', 'openai', 'judge-model', 5],
    ]);
    // The judge's calls are LLM calls like any SQL query's: one recorded per case, with the project.
    const calls = await sqlOk(
      t,
      `SELECT count(*) FROM information_schema.LLM_CALLS WHERE PROJECT = ${lit(w.project)} AND PROVIDER_MODEL = 'judge-model'`,
    );
    expect(Number(calls.data![0]![0])).toBe(6);
  });

  it('sql_result compares the expected SQL’s rows with those of the last SQL the agent ran', async () => {
    const w = await givenAgentWithSql(t, { database: '$project', tables: ['skills'] });
    fakes.push(w.fake);
    const p = w.project;
    // Case 1 counts as expected (the column's name differs: names are not compared) ✓;
    // case 2 reads no rows where one is expected ✗; case 3 runs no SQL at all ✗: 1/3.
    // Scripted per question (the cases run AGENT_SQL_CONCURRENCY at a time): once its tool answered,
    // each answers; before, it runs its SQL.
    w.fake.when(
      { lastUser: 'How many skills?', hasToolResult: 'sql_db_query' },
      fakeReply.text('One skill.'),
    );
    w.fake.when({ lastUser: 'Which skills?', hasToolResult: 'sql_db_query' }, fakeReply.text('None.'));
    w.fake.when(
      { lastUser: 'How many skills?' },
      fakeReply.toolCall('sql_db_query', { query: `SELECT count(*) AS n FROM ${p}.skills` }),
    );
    w.fake.when(
      { lastUser: 'Which skills?' },
      fakeReply.toolCall('sql_db_query', { query: `SELECT name FROM ${p}.skills WHERE false` }),
    );
    w.fake.when({ lastUser: 'Any skills?' }, fakeReply.text('I did not look.'));
    const set = [
      ['How many skills?', `SELECT count(*) FROM ${p}.skills`],
      ['Which skills?', `SELECT name FROM ${p}.skills`],
      ['Any skills?', `SELECT name FROM ${p}.skills`],
    ]
      .map(([q, s]) => `SELECT ${lit(q!)} AS question, ${lit(s!)} AS expected_sql`)
      .join(' UNION ALL ');
    await sqlOk(t, `CREATE VIEW ${p}.sql_cases AS (${set})`);
    const result = await evaluate(w, "scoring = 'sql_result'", `${p}.sql_cases`);
    expect(result).toMatchObject({ scoring: 'sql_result', cases: 3, passed: 1 });
    const listed = await sqlOk(
      t,
      `SELECT CASE_NUMBER, PASSED, ERROR FROM information_schema.AGENT_EVALUATION_CASES WHERE EVALUATION_ID = ${result.id} ORDER BY CASE_NUMBER`,
    );
    expect(listed.data).toEqual([
      [1, true, null],
      [2, false, null],
      [3, false, 'The agent ran no SQL'],
    ]);
  });

  it('compares two versions of the agent side by side, and a failing case replays without the model', async () => {
    const w = await givenScriptedAgent();
    const before = await evaluate(w, "scoring = 'contains'");
    // A new version of the agent: another model, which knows who wrote Hamlet.
    w.fake.when({ lastUser: 'Hamlet', model: 'gpt-test-2' }, fakeReply.text('William Shakespeare wrote it'));
    for (const c of CASES)
      w.fake.when({ lastUser: c.question, model: 'gpt-test-2' }, fakeReply.text(c.answer));
    await t.http
      .put(`/api/projects/${w.project}/agents/${w.agent}`)
      .send({
        agent: {
          model: { model_name: 'gpt-test-2', provider: 'openai', api_key: w.key, base_url: w.fake.baseUrl },
        },
      })
      .expect(200);
    const after = await evaluate(w, "scoring = 'contains'");
    expect(after.agent_version).toBeGreaterThan(before.agent_version);
    expect([before.passed, after.passed]).toEqual([5, 6]);
    // docs/agents.md's side-by-side query.
    const side = await sqlOk(
      t,
      `SELECT a.CASE_NUMBER, a.PASSED AS before_passed, b.PASSED AS after_passed, a.AGENT_VERSION, b.AGENT_VERSION
       FROM information_schema.AGENT_EVALUATION_CASES a
       JOIN information_schema.AGENT_EVALUATION_CASES b ON b.CASE_NUMBER = a.CASE_NUMBER
       WHERE a.EVALUATION_ID = ${before.id} AND b.EVALUATION_ID = ${after.id} AND a.PASSED <> b.PASSED`,
    );
    expect(side.data).toEqual([[6, false, true, before.agent_version, after.agent_version]]);
    const listed = await sqlOk(
      t,
      `SELECT ID, AGENT_VERSION, PASSED, TEST_SET_DIGEST FROM information_schema.AGENT_EVALUATIONS WHERE AGENT = ${lit(w.agent)} ORDER BY ID`,
    );
    expect(listed.data!.map((r) => r.slice(0, 3))).toEqual([
      [before.id, before.agent_version, 5],
      [after.id, after.agent_version, 6],
    ]);
    // The same test set (one digest) evaluated twice.
    expect(listed.data![0]![3]).toBe(listed.data![1]![3]);

    // The same over REST: the evaluations listed, and the two side by side.
    const base = `/api/projects/${w.project}/agents/${w.agent}/evaluations`;
    const list = (await t.http.get(base).expect(200)).body as Summary[];
    expect(list.map((e) => [e.id, e.agent_version, e.passed])).toEqual([
      [after.id, after.agent_version, 6],
      [before.id, before.agent_version, 5],
    ]);
    const compared = (await t.http.get(`${base}/${before.id}/compare/${after.id}`).expect(200)).body as {
      same_test_set: boolean;
      before: Summary;
      after: Summary;
      cases: {
        case_number: number;
        changed: boolean;
        before: { answer: string };
        after: { answer: string };
      }[];
    };
    expect(compared).toMatchObject({
      same_test_set: true,
      before: { id: before.id, passed: 5 },
      after: { id: after.id, passed: 6 },
    });
    expect(
      compared.cases.filter((c) => c.changed).map((c) => [c.case_number, c.before.answer, c.after.answer]),
    ).toEqual([[6, 'Christopher Marlowe', 'William Shakespeare wrote it']]);
    const unknown = await t.http.get(`${base}/${before.id}/compare/999999999`).expect(404);
    expect(unknown.body).toMatchObject({ title: 'Evaluation not found', status: 404 });
    expect((await t.http.get(`${base}/x/compare/${after.id}`).expect(400)).body.detail).toContain('before');

    // The failing case of the first version names its run; its replay calls no model.
    const failing = (await casesOf(before.id)).find((c) => !c[3])!;
    const calls = w.fake.chatRequests().length;
    const replay = await replayOf(t, w, failing[4]);
    expect(w.fake.chatRequests()).toHaveLength(calls);
    expect(replay).toMatchObject({ trace_id: failing[4], answer: 'Christopher Marlowe', model_calls: 0 });
  });

  it('reads the test set from a table (a view here), refuses one without the columns it needs, and forgets a dropped agent’s evaluations', async () => {
    const w = await givenScriptedAgent();
    await sqlOk(t, `CREATE VIEW ${w.project}.cases AS (${TEST_SET})`);
    const fromTable = await evaluate(w, "scoring = 'exact'", `${w.project}.cases`);
    expect(fromTable).toMatchObject({ cases: 6, passed: 1 });
    const calls = w.fake.chatRequests().length;
    const missing = await querySql(
      t,
      `EVALUATE AGENT ${w.project}.${w.agent} FROM (SELECT 'q' AS question, 'x' AS answer) USING scoring = 'exact'`,
    );
    expect(missing).toMatchObject({ type: 'error' });
    expect(missing.error_message).toContain(`EVALUATE AGENT ${w.project}.${w.agent}`);
    expect(missing.error_message).toContain('expected_answer');
    const noSql = await querySql(
      t,
      `EVALUATE AGENT ${w.project}.${w.agent} FROM (SELECT 'q' AS question, 'x' AS expected_answer) USING scoring = 'sql_result'`,
    );
    expect(noSql.error_message).toContain('expected_sql');
    const nul = await querySql(
      t,
      `EVALUATE AGENT ${w.project}.${w.agent} FROM (SELECT 'a' || chr(0) AS question, 'x' AS expected_answer)`,
    );
    expect(nul.error_message).toMatch(/Row 1 of .*: its question or expected_answer holds a NUL character/);
    // Refused before any question was asked.
    expect(w.fake.chatRequests()).toHaveLength(calls);

    // Deleting the agent removes its evaluations from the read model (its stream keeps them).
    const agentId = await agentIdOf(w);
    await sqlOk(t, `DROP AGENT ${w.project}.${w.agent}`);
    const left = await sqlOk(
      t,
      `SELECT (SELECT count(*) FROM information_schema.AGENT_EVALUATIONS WHERE AGENT = ${lit(w.agent)}),
        (SELECT count(*) FROM information_schema.AGENT_EVALUATION_CASES WHERE AGENT = ${lit(w.agent)})`,
    );
    expect(left.data!.map((r) => r.map(Number))).toEqual([[0, 0]]);
    expect((await eventsOf(t, `agent-evaluations-${agentId}`)).map((e) => e.type)).toEqual([
      'AgentEvaluated',
    ]);
    expect(await rebuildDifferences(t, 5)).toEqual([]);
  });

  it('a run that fails is its case’s failure: scored 0, with its error and its trace id', async () => {
    const w = await givenAgentWithSql(t, null);
    fakes.push(w.fake);
    w.fake.when({ lastUser: 'good' }, fakeReply.text('fine'));
    w.fake.when({ lastUser: 'bad' }, fakeReply.error(400, 'the provider refuses this'));
    const result = await evaluate(
      w,
      "scoring = 'contains'",
      "(SELECT 'good' AS question, 'fine' AS expected_answer UNION ALL SELECT 'bad', 'fine')",
    );
    expect(result).toMatchObject({ cases: 2, passed: 1 });
    const listed = await sqlOk(
      t,
      `SELECT CASE_NUMBER, PASSED, TRACE_ID IS NOT NULL, coalesce(ERROR LIKE '%provider refuses%', false) FROM information_schema.AGENT_EVALUATION_CASES WHERE EVALUATION_ID = ${result.id} ORDER BY CASE_NUMBER`,
    );
    expect(listed.data).toEqual([
      [1, true, true, false],
      [2, false, true, true],
    ]);
  });
});
