/**
 * The new inputs of EVALUATE KNOWLEDGE_BASE (version = 'llm_relevancy', save_to, a generated set
 * written to test_table) and of CREATE INDEX ON KNOWLEDGE_BASE, generated hostile (full Unicode with
 * lone surrogates and NUL, huge, deep, empty, wrong types): each answered with a table or a SQL
 * error naming the statement, and, when the one hostile value is an option's, naming that option;
 * never a 500 or an internal error. Afterwards the service evaluates, and a rebuild equals live.
 * Beside it, a kill check: an evaluation that refuses its options with the SQL layer's own error
 * (which the statement's naming passes by) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { clip, hostileString, ident, lit, readyAtHead } from '../support/hostile';
import { rebuildDifferences } from '../support/promise-rebuild';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';
import { evaluationRefusingAsSqlError } from '../support/killChecks';
import { givenTwoRecordKb } from './support-eval';

const SEED = propertySeed();
const RUNS = Number(process.env.HOSTILE_RUNS ?? 30);

/** A hostile value in each place, and the option an error must then name (null: the statement only). */
const statements = (project: string, kb: string, questions: string, llm: string) => {
  const on = `EVALUATE KNOWLEDGE_BASE ${project}.${kb} USING`;
  const good = `test_table = files.${questions}, version = 'llm_relevancy', ${llm}`;
  const named = (option: string | null) => (query: string) => ({ query, option });
  const wrongType = fc.oneof(
    fc.integer().map(String),
    fc.constantFrom('true', 'null', "['a', 'b']", "{'a': 1}", '1e308', '-0.5'),
  );
  return fc.oneof(
    hostileString.map((s) => named('save_to')(`${on} ${good}, save_to = ${lit(s)}`)),
    hostileString.map((s) => named('save_to')(`${on} ${good}, save_to = files.${ident(s)}`)),
    wrongType.map((v) => named('save_to')(`${on} ${good}, save_to = ${v}`)),
    hostileString.map((s) => named('top_k')(`${on} ${good}, top_k = ${lit(s)}`)),
    wrongType.map((v) => named('top_k')(`${on} ${good}, top_k = ${v}`)),
    // The llm option is refused inside the evaluation itself (the others before it), so it is drawn
    // three times as often: at one draw in six, 30 runs drew none about one seed in 250 (CI: seed
    // 2070366878), and the kill check below, whose bug only that refusal shows, was not caught.
    {
      weight: 3,
      arbitrary: hostileString.map((s) =>
        named('llm')(
          `${on} test_table = files.${questions}, version = 'llm_relevancy', llm = {'provider': ${lit(s)}, 'model_name': ${lit(s)}}`,
        ),
      ),
    },
    {
      weight: 3,
      arbitrary: wrongType.map((v) =>
        named('llm')(`${on} test_table = files.${questions}, version = 'llm_relevancy', llm = ${v}`),
      ),
    },
    hostileString.map((s) =>
      named('test_table')(`${on} version = 'llm_relevancy', ${llm}, test_table = ${lit(s)}`),
    ),
    hostileString.map((s) =>
      named('test_table')(
        `${on} version = 'llm_relevancy', generate_data = {'count': 1}, ${llm}, test_table = ${lit(s)}`,
      ),
    ),
    hostileString.map((s) => named(null)(`CREATE INDEX ON KNOWLEDGE_BASE ${project}.${ident(s)}`)),
    hostileString.map((s) => named(null)(`CREATE INDEX ON KNOWLEDGE_BASE ${ident(s)}.${kb}`)),
    fc.constant(named(null)(`${on} ${good}`)),
  );
};

describe.each(storeKinds)('generated values in llm_relevancy, save_to and CREATE INDEX (%s)', (kind) => {
  let t: TestApp;
  let judge: FakeOpenAi;
  const project = 'hostile_relevancy';
  const kb = 'hkb';
  const questions = `hostile_rel_questions_${process.pid}`;
  beforeAll(async () => {
    judge = (await startFakeOpenAi()).setFallback(fakeReply.text('70'));
    t = await startTestApp(kind);
    await givenTwoRecordKb(t, { project, kb, questions }, 'answer');
  }, 60_000);
  afterAll(async () => {
    await t.dispose();
    await judge.close();
  });

  const llmOf = () =>
    `llm = {'provider': 'openai', 'model_name': 'm', 'api_key': 'sk-h', 'base_url': '${judge.baseUrl}'}`;

  /** One statement: the promise it broke (an internal error, an error not naming the statement or the option), if any. */
  const answered = async ({ query, option }: { query: string; option: string | null }) => {
    const res = await t.http.post('/api/sql/query').send({ query });
    const body = res.body as { type?: string; error_code?: number; error_message?: string };
    const statement = query.startsWith('EVALUATE') ? 'EVALUATE KNOWLEDGE_BASE' : 'CREATE INDEX';
    if (res.status !== 200 || body.error_code === 1105)
      return `${clip(query)} → ${res.status} ${clip(res.text)}`;
    // A statement the grammar cannot read is a syntax error naming where (an empty `` name).
    if (body.type === 'error' && body.error_code === 1064) return undefined;
    if (body.type === 'error' && !body.error_message?.includes(statement))
      return `${clip(query)} → an error not naming ${statement}: ${clip(body.error_message ?? '')}`;
    if (body.type === 'error' && option !== null && !body.error_message?.includes(option))
      return `${clip(query)} → an error not naming ${option}: ${clip(body.error_message ?? '')}`;
    return undefined;
  };

  it('answers every statement (a table, ok, or an error naming the statement and the option), and the service goes on', async () => {
    const violations = new Set<string>();
    const llm = llmOf();
    await fc.assert(
      fc.asyncProperty(statements(project, kb, questions, llm), async (sent) => {
        const violation = await answered(sent);
        if (violation !== undefined) violations.add(violation);
      }),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    expect([...violations]).toEqual([]);

    // The service goes on: it evaluates with the judge, and its read model is at the head and rebuilds equal.
    const after = (
      await t.http
        .post('/api/sql/query')
        .send({
          query: `EVALUATE KNOWLEDGE_BASE ${project}.${kb} USING test_table = files.${questions}, version = 'llm_relevancy', ${llm}`,
        })
        .expect(200)
    ).body as { type: string; column_names: string[]; data: unknown[][] };
    expect(after.type).toBe('table');
    // The judge answers 70 to every chunk: every chunk relevant, the first at position 0.
    expect(after.data[0]![after.column_names.indexOf('mean_mrr')]).toBe(1);

    const ready = await readyAtHead(t);
    expect(ready?.position).toBe(ready?.log_head);
    expect(await rebuildDifferences(t, 5)).toEqual([]);
  }, 600_000);

  it("kill check: an evaluation refusing its options with the SQL layer's own error is caught", async () => {
    // The bug: the knowledge base's evaluation throws its refusals as `SqlError`s (1210) rather than
    // as invalid-request errors, which the statement's naming passes by: no statement named.
    const restore = evaluationRefusingAsSqlError(t);
    try {
      await expectCaught(
        fc.asyncProperty(
          statements(project, kb, questions, llmOf()),
          async (sent) => (await answered(sent)) === undefined,
        ),
        { seed: SEED, numRuns: propertyRuns(RUNS) },
      );
    } finally {
      restore();
    }
  }, 600_000);
});
