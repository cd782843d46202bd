/**
 * EVALUATE AGENT over REST (docs/agents.md "Evaluating an agent"): `POST …/agents/{a}/evaluations`
 * with the statement's test set (`test_table` or `query`) and options in `evaluation` makes the same
 * evaluation as the SQL statement — the same scores, one AgentEvaluated event, listed by GET; every
 * hostile body is a 400 problem naming the field, with nothing asked and nothing appended; and only
 * a role that may write evaluates (the analyst and the auditor may not, a token only in its project).
 */
import fc from 'fast-check';
import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi } from '../support/fakeOpenAi';
import { deepJson, hostileString, withLoneSurrogate } from '../support/hostile';
import { propertyRuns, propertySeed } from '../support/seed';
import { storableText } from '../../src/shared/jsonBounds';
import { ADMIN, login, projectToken, startAuthApp, userWithRole } from '../auth/support';
import { eventsOf, givenAgentWithSql, type AgentWorld } from '../agentRuns/support';

const SEED = propertySeed();
const RUNS = propertyRuns(30);

/** Questions, the scripted agent's answers, and what the test set expects (contains: 2 of 3). */
const CASES = [
  { question: 'Capital of France?', answer: 'It is Paris.', expected: 'Paris' },
  { question: 'Largest planet?', answer: 'Jupiter', expected: 'Jupiter' },
  { question: 'Author of Hamlet?', answer: 'Marlowe', expected: 'Shakespeare' },
] as const;
const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;
const TEST_SET = CASES.map(
  (c) => `SELECT ${lit(c.question)} AS question, ${lit(c.expected)} AS expected_answer`,
).join(' UNION ALL ');
const CSV = ['question,expected_answer', ...CASES.map((c) => `"${c.question}","${c.expected}"`)].join('\n');

/** Scripts the stand-in: each question answered as CASES says. */
const scripted = (w: AgentWorld) => {
  for (const c of CASES) w.fake.when({ lastUser: c.question }, fakeReply.text(c.answer));
  return w;
};

describe.each(storeKinds)('EVALUATE AGENT over REST (%s)', (store) => {
  let t: TestApp;
  const worlds: AgentWorld[] = [];
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await Promise.all(worlds.map((w) => w.fake.close()));
    await t.dispose();
  });
  const givenAgent = async () => {
    const w = scripted(await givenAgentWithSql(t, null));
    worlds.push(w);
    return w;
  };
  const post = (w: AgentWorld, evaluation: unknown) =>
    t.http.post(`/api/projects/${w.project}/agents/${w.agent}/evaluations`).send({ evaluation });
  const agentIdOf = async (w: AgentWorld) =>
    ((await t.http.get(`/api/projects/${w.project}/agents/${w.agent}`).expect(200)).body as { id: number })
      .id;

  it('makes the evaluation the SQL statement makes: the same scores, one event, listed', async () => {
    const w = await givenAgent();
    const made = (await post(w, { query: TEST_SET, scoring: 'contains' }).expect(201)).body as Record<
      string,
      unknown
    >;
    expect(made).toMatchObject({ agent: w.agent, scoring: 'contains', cases: 3, passed: 2 });
    expect(made.pass_rate).toBeCloseTo(2 / 3, 12);
    const bySql = await querySql(
      t,
      `EVALUATE AGENT ${w.project}.${w.agent} FROM (${TEST_SET}) USING scoring = 'contains'`,
    );
    expect(bySql.type).toBe('table');
    const sqlRow = Object.fromEntries(bySql.column_names!.map((n, i) => [n, bySql.data![0]![i]]));
    const same = [
      'agent',
      'agent_version',
      'scoring',
      'cases',
      'passed',
      'pass_rate',
      'mean_score',
      'test_set_digest',
    ];
    expect(Object.fromEntries(same.map((k) => [k, made[k]]))).toEqual(
      Object.fromEntries(same.map((k) => [k, sqlRow[k]])),
    );
    const events = await eventsOf(t, `agent-evaluations-${await agentIdOf(w)}`);
    expect(events.map((e) => [e.type, e.data.source, e.data.passed])).toEqual([
      ['AgentEvaluated', `(${TEST_SET})`, 2],
      ['AgentEvaluated', `(${TEST_SET})`, 2],
    ]);
    const listed = (await t.http.get(`/api/projects/${w.project}/agents/${w.agent}/evaluations`).expect(200))
      .body as { id: number }[];
    expect(listed.map((e) => e.id)).toEqual([sqlRow.id, made.id]);
  });

  it('reads a test table named db.table, as the caller would', async () => {
    const w = await givenAgent();
    const file = `eval_rest_${store}`;
    await t.http.put(`/api/files/${file}`).attach('file', Buffer.from(CSV), `${file}.csv`).expect(200);
    const made = (await post(w, { test_table: `files.${file}` }).expect(201)).body as Record<string, unknown>;
    // exact: only "Jupiter" is answered exactly.
    expect(made).toMatchObject({ scoring: 'exact', cases: 3, passed: 1 });
    const missing = await post(w, { test_table: 'files.no_such_table' }).expect(400);
    expect(problemOf(missing).detail).toMatch(/no_such_table/);
  });

  it('answers 404 for an unknown agent or project, asking nothing', async () => {
    const w = await givenAgent();
    const before = w.fake.chatRequests().length;
    await t.http
      .post(`/api/projects/${w.project}/agents/nope/evaluations`)
      .send({ evaluation: { query: TEST_SET } })
      .expect(404);
    await t.http
      .post(`/api/projects/nope_project/agents/${w.agent}/evaluations`)
      .send({ evaluation: { query: TEST_SET } })
      .expect(404);
    expect(w.fake.chatRequests()).toHaveLength(before);
  });

  it('refuses every hostile body with a 400 naming the field, asking nothing and appending nothing', async () => {
    const w = await givenAgent();
    const stream = `agent-evaluations-${await agentIdOf(w)}`;
    const hostileText = withLoneSurrogate(hostileString);
    const body = fc.oneof(
      fc.constant({ field: 'test_table', evaluation: { test_table: 'files.x', query: TEST_SET } }),
      fc.constant({ field: 'test_table', evaluation: { scoring: 'exact' } }),
      fc.constant({ field: 'tolerance', evaluation: { query: TEST_SET, tolerance: 1 } }),
      fc.constant({ field: 'rubric', evaluation: { query: TEST_SET, scoring: 'llm_judge' } }),
      fc.constant({ field: 'llm', evaluation: { query: TEST_SET, llm: deepJson(40) } }),
      fc.constant({ field: 'scoring', evaluation: { query: TEST_SET, scoring: 'nope' } }),
      fc.constant({ field: 'evaluation', evaluation: { query: TEST_SET, unknown_option: 1 } }),
      fc.constant({ field: 'test_table', evaluation: { test_table: 'no_dot' } }),
      fc.constant({ field: 'query', evaluation: { query: 'x'.repeat(100_001) } }),
      hostileText
        .filter((s) => s.length === 0 || s.length > 100_000 || !storableText(s))
        .map((query) => ({ field: 'query', evaluation: { query } })),
      hostileText
        .filter((s) => s.length === 0 || s.length > 4_000 || !storableText(s))
        .map((rubric) => ({
          field: 'rubric',
          evaluation: { query: TEST_SET, scoring: 'llm_judge', rubric },
        })),
    );
    const asked = w.fake.chatRequests().length;
    const before = (await eventsOf(t, stream)).length;
    await fc.assert(
      fc.asyncProperty(body, async ({ field, evaluation }) => {
        const res = await post(w, evaluation);
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(problemOf(res)).toMatchObject({ status: 400, detail: expect.stringContaining(field) });
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(w.fake.chatRequests()).toHaveLength(asked);
    expect(await eventsOf(t, stream)).toHaveLength(before);
  });
});

describe.each(storeKinds)('who may evaluate an agent over REST (%s)', (store) => {
  it('the admin, an editor and a token of its project; not the analyst, the auditor, another project’s token', async () => {
    const t = await startAuthApp(store);
    const fake = await startFakeOpenAi();
    try {
      const admin = await login(t, ADMIN.name, ADMIN.password);
      const asAdmin = { Cookie: admin };
      for (const c of CASES) fake.when({ lastUser: c.question }, fakeReply.text(c.answer));
      for (const name of ['p_eval_roles', 'other_project'])
        await t.http.post('/api/projects').set(asAdmin).send({ name }).expect(201);
      await t.http
        .post('/api/projects/p_eval_roles/agents')
        .set(asAdmin)
        .send({
          agent: {
            name: 'ag',
            model: {
              model_name: 'gpt-test',
              provider: 'openai',
              api_key: 'sk-roles',
              base_url: fake.baseUrl,
            },
          },
        })
        .expect(201);
      const headersOf = async (who: string): Promise<Record<string, string>> => {
        if (who === 'admin') return asAdmin;
        const scoped = /^token\((.+)\)$/.exec(who);
        if (scoped) return { Authorization: `Bearer ${await projectToken(t, admin, scoped[1]!)}` };
        return { Cookie: (await userWithRole(t, admin, `u_${who}`, who)).cookie };
      };
      const answers: Record<string, number> = {};
      for (const who of [
        'admin',
        'editor',
        'token(p_eval_roles)',
        'analyst',
        'auditor',
        'token(other_project)',
      ])
        answers[who] = (
          await t.http
            .post('/api/projects/p_eval_roles/agents/ag/evaluations')
            .set(await headersOf(who))
            .send({ evaluation: { query: TEST_SET } })
        ).status;
      expect(answers).toEqual({
        admin: 201,
        editor: 201,
        'token(p_eval_roles)': 201,
        analyst: 403,
        auditor: 403,
        'token(other_project)': 403,
      });
      // Three evaluations made, three cases asked in each: nothing asked for a refused caller.
      expect(fake.chatRequests()).toHaveLength(9);
      // The evaluations' stream is the project's: its token reads it in the log, the other's does not.
      const agentId = (
        (await t.http.get('/api/projects/p_eval_roles/agents/ag').set(asAdmin).expect(200)).body as {
          id: number;
        }
      ).id;
      const streamsSeenBy = async (who: string) => {
        const res = await t.http
          .post('/api/sql/query')
          .set(await headersOf(who))
          .send({
            query:
              "SELECT DISTINCT STREAM, count(*) OVER (PARTITION BY STREAM) FROM information_schema.EVENTS WHERE STREAM LIKE 'agent-evaluations-%'",
          })
          .expect(200);
        return (res.body as { data: unknown[][] }).data;
      };
      expect(await streamsSeenBy('token(p_eval_roles)')).toEqual([[`agent-evaluations-${agentId}`, 3]]);
      expect(await streamsSeenBy('token(other_project)')).toEqual([]);
    } finally {
      await fake.close();
      await t.dispose();
    }
  });
});
