/**
 * EVALUATE AGENT's guards (docs/agents.md "Evaluating an agent"):
 * - who may: an evaluation asks the agent (it spends) and writes an event, so admin and editor; the
 *   analyst (read-only), the auditor and a project-scoped token (reading statements only in SQL) are
 *   refused, and a refusal asks nothing and writes nothing;
 * - every option generated hostile (lone surrogates, NUL, huge, empty, deep, wrong types) is a SQL
 *   error naming the statement and the option, never a crash, never a run, never an event. A kill
 *   check beside it: an option checker that let a bad value through would be caught.
 */
import fc from 'fast-check';
import { storeKinds, type TestApp } from '../support/app';
import type { FakeOpenAi } from '../support/fakeOpenAi';
import { givenHelperAgent, startRoleWorld, type Who } from '../auth/support';
import { hostileJson, hostileString } from '../support/hostile';
import { propertyRuns, propertySeed } from '../support/seed';
import { agentEvaluationOptions } from '../../src/agents/evaluationSchemas';

const SEED = propertySeed();
const RUNS = 25;

const EVALUATE = (using: string) =>
  `EVALUATE AGENT pa.helper FROM (SELECT 'Say hello' AS question, 'hello' AS expected_answer) USING ${using}`;

describe.each(storeKinds)('EVALUATE AGENT guards (%s)', (store) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let admin: string;
  let tokens: Record<Who, string>;
  beforeAll(async () => {
    ({ t, fake, admin, tokens } = await startRoleWorld(store, 'ea'));
    await t.http.post('/api/projects').set('Cookie', admin).send({ name: 'pa' }).expect(201);
    await givenHelperAgent(t, admin, 'pa', fake);
  }, 60_000);
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });

  const head = async () =>
    ((await t.http.get('/api/ready').set('Cookie', admin).expect(200)).body as { log_head: string }).log_head;
  const sqlAs = async (who: Who, query: string) =>
    (
      await t.http
        .post('/api/sql/query')
        .set('Authorization', `Bearer ${tokens[who]}`)
        .send({ query })
        .expect(200)
    ).body as { type: string; error_message?: string; column_names?: string[]; data?: unknown[][] };

  it('admin and editor evaluate; analyst, auditor and a scoped token are refused, asking and writing nothing', async () => {
    const outcomes: Record<string, string> = {};
    for (const who of ['admin', 'editor', 'analyst', 'auditor', 'token(pa)'] as const) {
      const before = await head();
      const calls = fake.chatRequests().length;
      const answer = await sqlAs(who, EVALUATE("scoring = 'contains'"));
      if (answer.type === 'table') {
        const passed = answer.data![0]![answer.column_names!.indexOf('passed')];
        outcomes[who] = `evaluated, passed ${passed}`;
      } else {
        expect(await head()).toBe(before);
        expect(fake.chatRequests()).toHaveLength(calls);
        outcomes[who] = 'refused';
      }
    }
    // The stand-in says "Hello from the agent.", which contains "hello" (case folded).
    expect(outcomes).toEqual({
      admin: 'evaluated, passed 1',
      editor: 'evaluated, passed 1',
      analyst: 'refused',
      auditor: 'refused',
      'token(pa)': 'refused',
    });
  });

  it('reading evaluations over REST: every role that reads runs (admin, editor, analyst, the scoped token); not the auditor', async () => {
    // An evaluation of this test's own (the cases run in any order: none may lean on another's).
    expect(await sqlAs('admin', EVALUATE("scoring = 'contains'"))).toMatchObject({ type: 'table' });
    const listed = async (who: keyof typeof tokens) =>
      t.http.get('/api/projects/pa/agents/helper/evaluations').set('Authorization', `Bearer ${tokens[who]}`);
    const all = ((await listed('admin')).body as unknown[]).length;
    expect(all).toBeGreaterThanOrEqual(1);
    const read: Record<string, number> = {};
    for (const who of ['admin', 'editor', 'analyst', 'auditor', 'token(pa)'] as const) {
      const res = await listed(who);
      read[who] = res.status;
      if (res.status === 200) expect((res.body as unknown[]).length).toBe(all);
    }
    expect(read).toEqual({ admin: 200, editor: 200, analyst: 200, auditor: 403, 'token(pa)': 200 });
  });

  /** A USING value as SQL writes it: a quoted text, a number or a JSON value. */
  const usingValue = fc.oneof(
    hostileString.map((s) => `'${s.replaceAll("'", "''")}'`),
    fc.double().map((n) => (Number.isFinite(n) ? String(n) : '-1e999')),
    hostileJson.map((j) => JSON.stringify(j) ?? 'null'),
  );
  const option = fc.constantFrom('scoring', 'tolerance', 'rubric', 'llm', 'unknown_option');
  type Reply = { status: number; type: string; body: Record<string, unknown> };
  /** How many answers were the statement's own refusal (not a syntax error): the property reached the options. */
  let namedRefusals = 0;

  /** What is wrong with the answer to `EVALUATE … USING name = value` (null: nothing). */
  const wrongWith = (name: string, r: Reply): string | null => {
    if (r.status >= 500) return `answered ${r.status}`;
    if (r.status >= 400)
      return /^application\/problem\+json/.test(r.type) ? null : `${r.status} without problem+json`;
    const message = String(r.body.error_message ?? '');
    if (r.body.type === 'table') return name === 'scoring' ? null : 'evaluated with a bad option';
    if (r.body.type !== 'error') return `answered ${String(r.body.type)}`;
    // A value the statement's grammar cannot read is a syntax error, before any option is looked at.
    if (/syntax|expected/i.test(message) && !message.startsWith('EVALUATE AGENT')) return null;
    return message.startsWith('EVALUATE AGENT pa.helper:') && message.includes(name)
      ? null
      : `an error not naming the statement and ${name}: ${message.slice(0, 200)}`;
  };
  const property = (ask: (name: string, value: string) => Promise<Reply>) =>
    fc.asyncProperty(option, usingValue, async (name, value) => {
      const wrong = wrongWith(name, await ask(name, value));
      if (wrong !== null) throw new Error(`${name} = ${value.slice(0, 80)}: ${wrong}`);
    });
  const realAsk = async (name: string, value: string): Promise<Reply> => {
    const res = await t.http
      .post('/api/sql/query')
      .set('Cookie', admin)
      .send({ query: EVALUATE(`${name} = ${value}`) });
    const body = res.body as Record<string, unknown>;
    if (String(body.error_message ?? '').startsWith('EVALUATE AGENT pa.helper:')) namedRefusals++;
    return {
      status: res.status,
      type: String(res.headers['content-type']),
      body,
    };
  };

  it('answers every hostile option with a SQL error naming the statement and the option: no run, no event', async () => {
    const before = await head();
    const calls = fake.chatRequests().length;
    await fc.assert(property(realAsk), { seed: SEED, numRuns: propertyRuns(RUNS) });
    expect(namedRefusals).toBeGreaterThan(0);
    // Nothing was asked of the agent and nothing written (a drawn valid scoring would have: none is drawn).
    expect(fake.chatRequests()).toHaveLength(calls);
    expect(await head()).toBe(before);
  });

  it('kill check: the property catches an error that does not name the option, and a crash', async () => {
    const vague = async (): Promise<Reply> => ({
      status: 200,
      type: 'application/json',
      body: { type: 'error', error_code: 1, error_message: 'EVALUATE AGENT pa.helper: Invalid evaluation' },
    });
    const crash = async (): Promise<Reply> => ({ status: 500, type: 'application/problem+json', body: {} });
    for (const broken of [vague, crash])
      expect((await fc.check(property(broken), { seed: SEED, numRuns: 20 })).failed).toBe(true);
    // …and the options schema refuses each kind of bad value on its own.
    for (const options of [
      { scoring: 'exact\u0000' },
      { scoring: 'contains', tolerance: 1 },
      { scoring: 'numeric', tolerance: -1 },
      { scoring: 'llm_judge' },
      { scoring: 'llm_judge', rubric: 'a\ud800' },
      { scoring: 'llm_judge', rubric: 'x'.repeat(70_000) },
      { unknown_option: 1 },
    ])
      expect(agentEvaluationOptions.safeParse(options).success).toBe(false);
  });
});
