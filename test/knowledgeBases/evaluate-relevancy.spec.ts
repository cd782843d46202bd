/**
 * EVALUATE KNOWLEDGE_BASE … version = 'llm_relevancy' (MindsDB's EvaluateRerank): each question's
 * top K chunks scored by a judge language model, MindsDB's metrics over the scores. The judge here
 * is the repository's OpenAI stand-in with one deterministic rule: it answers the number after
 * "grade" in the chunk it is shown ("gradeno": an answer that is not a score, which MindsDB reads
 * as 0). The knowledge base is built so its ranking is known (and checked first), so every metric is
 * computed by hand below and asserted exactly.
 */
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { freshPostgresData, rowsInExternal } from '../support/external';
import { rebuildDifferences } from '../support/promise-rebuild';
import { eventsOf, kbIdOf, ok, rowsOf, unique } from './support-eval';

jest.setTimeout(120_000);

/** The judge: "grade90" in the chunk → "90"; no grade number → "no" (not a score). */
const gradingJudge = (f: FakeOpenAi) =>
  f.setFallback((body) => fakeReply.text(/grade(\d+)/.exec(lastUserText(body))?.[1] ?? 'no'));

/**
 * Four documents whose words nest, so both questions rank all four strictly (cosine and BM25 agree):
 *   "xenon yarrow zircon" → a, b, c, d;  "xenon" → c, b, a, d (the shorter the document, the closer).
 * The judge's scores: a 0.9, b 0 (no number), c 0.3, d 0.6; relevant (≥ 0.5): a and d.
 */
const DOCUMENTS = [
  ['a', 'xenon yarrow zircon grade90'],
  ['b', 'xenon yarrow gradeno'],
  ['c', 'xenon grade30'],
  ['d', 'vortex grade60'],
] as const;

const givenGradedWorld = async (t: TestApp) => {
  const project = unique('p');
  const kb = unique('kb');
  const questions = unique('rel_questions');
  await t.http
    .put(`/api/files/${questions}`)
    .attach('file', Buffer.from('question,answer\nxenon yarrow zircon,a\nxenon,c\n'), `${questions}.csv`)
    .expect(200);
  await ok(t, `CREATE PROJECT ${project}`);
  await ok(t, `CREATE KNOWLEDGE_BASE ${project}.${kb} USING content_columns = ['content'], id_column = 'id'`);
  await ok(
    t,
    `INSERT INTO ${project}.${kb} (id, content) VALUES ${DOCUMENTS.map(([id, c]) => `('${id}', '${c}')`).join(', ')}`,
  );
  const ranking = async (question: string) =>
    rowsOf(await ok(t, `SELECT id FROM ${project}.${kb} WHERE content = '${question}' LIMIT 4`)).map(
      (r) => r.id,
    );
  return { project, kb, questions, ranking };
};

// By hand, per question (scores in rank order; relevant when ≥ 0.5):
//   q1 [a, b, c, d] → [0.9, 0, 0.3, 0.6], relevant [1, 0, 0, 1], first relevant at 0
//   q2 [c, b, a, d] → [0.3, 0, 0.9, 0.6], relevant [0, 0, 1, 1], first relevant at 2
// avg_relevancy = mean(1.8 / 4, 1.8 / 4) = 0.45
// avg_relevance_score_by_k = [(0.9 + 0.3) / 2, 0, (0.3 + 0.9) / 2, (0.6 + 0.6) / 2] = [0.6, 0, 0.6, 0.6]
// avg_first_relevant_position = (0 + 2) / 2 = 1;  mean_mrr = (1 / 1 + 1 / 3) / 2 = 2 / 3
// hit_at_k = mean([1, 1, 1, 1], [0, 0, 1, 1]) = [0.5, 0.5, 1, 1]
// bin_precision_at_k = mean([1, 1/2, 1/3, 2/4], [0, 0, 1/3, 2/4]) = [0.5, 0.25, 0.33, 0.5] (2 places)
// avg_entropy: both normalise to {0.5, 1/6, 1/3}: −(½ ln ½ + ⅙ ln ⅙ + ⅓ ln ⅓)
// avg_ndcg: ideal DCG = 0.9 + 0.6 / log2 3 + 0.3 / 2; q1 DCG = 0.9 + 0.3 / 2 + 0.6 / log2 5,
//   q2 DCG = 0.3 + 0.9 / 2 + 0.6 / log2 5; the mean of their ratios to the ideal.
// 0.45, summed as MindsDB sums it (left to right, in doubles): 0.44999999999999996.
const AVG_RELEVANCY = (0 + (0.9 + 0 + 0.3 + 0.6) / 4 + (0.3 + 0 + 0.9 + 0.6) / 4) / 2;
const ENTROPY = -(0.5 * Math.log(0.5) + (1 / 6) * Math.log(1 / 6) + (1 / 3) * Math.log(1 / 3));
const IDEAL = 0.9 + 0.6 / Math.log2(3) + 0.3 / 2;
const NDCG =
  ((0.9 + 0.3 / 2 + 0.6 / Math.log2(5)) / IDEAL + (0.3 + 0.9 / 2 + 0.6 / Math.log2(5)) / IDEAL) / 2;

describe.each(storeKinds)('EVALUATE KNOWLEDGE_BASE version = llm_relevancy (%s)', (store) => {
  let t: TestApp;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    await t.dispose();
  });
  const judge = async () => {
    const f = gradingJudge(await startFakeOpenAi());
    fakes.push(f);
    return f;
  };
  const llmOf = (f: FakeOpenAi, key = 'sk-judge') =>
    `llm = {'provider': 'openai', 'model_name': 'judge-model', 'api_key': '${key}', 'base_url': '${f.baseUrl}'}`;

  it('has the judge score each chunk retrieved and answers MindsDB’s metrics, as computed by hand', async () => {
    const w = await givenGradedWorld(t);
    // Given the ranking the hand computation assumes.
    expect(await w.ranking('xenon yarrow zircon')).toEqual(['a', 'b', 'c', 'd']);
    expect(await w.ranking('xenon')).toEqual(['c', 'b', 'a', 'd']);
    const f = await judge();
    const key = `sk-judge-${unique('k')}`;

    const answer = await ok(
      t,
      `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}, version = 'llm_relevancy', top_k = 4, ${llmOf(f, key)}`,
    );
    expect(answer.column_names!.slice(0, 12)).toEqual([
      'avg_relevancy',
      'avg_relevance_score_by_k',
      'avg_first_relevant_position',
      'mean_mrr',
      'hit_at_k',
      'bin_precision_at_k',
      'avg_entropy',
      'avg_ndcg',
      'avg_query_time',
      'id',
      'name',
      'created_at',
    ]);
    const row = rowsOf(answer)[0]!;
    expect(row).toMatchObject({
      avg_relevancy: AVG_RELEVANCY,
      avg_relevance_score_by_k: '[0.6,0,0.6,0.6]',
      avg_first_relevant_position: 1,
      hit_at_k: '[0.5,0.5,1,1]',
      bin_precision_at_k: '[0.5,0.25,0.33,0.5]',
      name: w.kb,
      top_k: 4,
      judge_provider: 'openai',
      judge_model: 'judge-model',
      questions: 2,
    });
    expect(row.mean_mrr).toBeCloseTo(2 / 3, 12);
    expect(row.avg_entropy).toBeCloseTo(ENTROPY, 12);
    expect(row.avg_ndcg).toBeCloseTo(NDCG, 12);

    // Then the judge was asked once per chunk, MindsDB's prompt, with the question in the system message.
    const chats = f.chatRequests();
    expect(chats).toHaveLength(8);
    expect(chats.every((b) => b.model === 'judge-model' && b.temperature === 0)).toBe(true);
    expect(chats.map((b) => String(b.messages[0]!.content))).toContain(
      'Score the relevance between search query and user message on scale between 0 and 100 per cents. Consider semantic meaning, key concepts, and contextual relevance. Return ONLY a numerical score between 0 and 100 per cents. No other text. Stop after sending a number. Search query: xenon',
    );

    // And each judge call is in the LLM calls' log with its tokens, as any LLM call is.
    const calls = rowsOf(
      await ok(
        t,
        `SELECT SOURCE, PROJECT, PROVIDER_MODEL, OUTCOME, PROMPT_TOKENS, TOTAL_TOKENS FROM information_schema.LLM_CALLS WHERE BASE_URL = '${f.baseUrl}'`,
      ),
    );
    expect(calls).toHaveLength(8);
    for (const call of calls) {
      expect(call).toMatchObject({ SOURCE: 'function', PROJECT: w.project, PROVIDER_MODEL: 'judge-model' });
      expect(call.OUTCOME).toBe('ok');
      expect(Number(call.TOTAL_TOKENS)).toBeGreaterThan(0);
    }

    // And the evaluation is one event on the knowledge base's stream, with every chunk's score.
    const kbId = await kbIdOf(t, w.project, w.kb);
    const [event] = (await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated');
    expect(event!.data).toMatchObject({
      version: 'llm_relevancy',
      testTable: `files.${w.questions}`,
      testSet: { questions: 2, generated: null },
      scores: null,
      relevancy: {
        judge: { provider: 'openai', model: 'judge-model', baseUrl: f.baseUrl },
        scores: [
          [0.9, 0, 0.3, 0.6],
          [0.3, 0, 0.9, 0.6],
        ],
        avgFirstRelevantPosition: 1,
      },
    });
    expect(JSON.stringify(event)).not.toContain(key);

    // And it is listed where doc_id evaluations are: REST and information_schema.
    const listed = (
      await t.http.get(`/api/projects/${w.project}/knowledge_bases/${w.kb}/evaluations`).expect(200)
    ).body as Record<string, unknown>[];
    expect(listed[0]).toMatchObject({ version: 'llm_relevancy', avg_relevancy: AVG_RELEVANCY, id: row.id });
    expect(JSON.parse(String(listed[0]!.hit_at_k))).toEqual([0.5, 0.5, 1, 1]);
    const schemaRows = rowsOf(
      await ok(
        t,
        `SELECT VERSION, AVG_RELEVANCY, HIT_AT_K, MEAN_MRR, JUDGE_MODEL, TOTAL FROM information_schema.KNOWLEDGE_BASE_EVALUATIONS WHERE ID = ${Number(row.id)}`,
      ),
    );
    expect(schemaRows).toHaveLength(1);
    expect(schemaRows[0]).toMatchObject({
      VERSION: 'llm_relevancy',
      AVG_RELEVANCY: AVG_RELEVANCY,
      TOTAL: null,
    });
    expect(JSON.parse(String(schemaRows[0]!.HIT_AT_K))).toEqual([0.5, 0.5, 1, 1]);
    // Over REST, the same options in a body: the same metrics, another event.
    const rest = await t.http
      .post(`/api/projects/${w.project}/knowledge_bases/${w.kb}/evaluations`)
      .send({
        evaluation: {
          test_table: `files.${w.questions}`,
          version: 'llm_relevancy',
          top_k: 4,
          llm: { provider: 'openai', model_name: 'judge-model', api_key: key, base_url: f.baseUrl },
        },
      })
      .expect(201);
    expect(rest.body).toMatchObject({
      version: 'llm_relevancy',
      avg_relevancy: AVG_RELEVANCY,
      hit_at_k: '[0.5,0.5,1,1]',
      total: null,
    });
    expect(JSON.stringify(rest.body)).not.toContain(key);

    // A doc_id evaluation beside it (its event has no relevancy): a rebuild from the log equals live.
    const docIds = unique('docid_questions');
    await t.http
      .put(`/api/files/${docIds}`)
      .attach('file', Buffer.from('question,doc_id\nxenon,c\n'), `${docIds}.csv`)
      .expect(200);
    await ok(t, `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${docIds}`);
    expect(await rebuildDifferences(t, 3)).toEqual([]);
  });

  it('save_to appends the result row to a file (made by the first), read back with SELECT', async () => {
    const w = await givenGradedWorld(t);
    const f = await judge();
    const results = unique('eval_results');
    const evaluate = async () =>
      rowsOf(
        await ok(
          t,
          `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}, version = 'llm_relevancy', top_k = 4, ${llmOf(f)}, save_to = files.${results}`,
        ),
      )[0]!;
    await evaluate();
    await evaluate();
    const saved = rowsOf(
      await ok(
        t,
        `SELECT avg_relevancy, hit_at_k, bin_precision_at_k, name, top_k, judge_model FROM files.${results}`,
      ),
    );
    expect(saved).toEqual([
      {
        avg_relevancy: AVG_RELEVANCY,
        hit_at_k: '[0.5,0.5,1,1]',
        bin_precision_at_k: '[0.5,0.25,0.33,0.5]',
        name: w.kb,
        top_k: 4,
        judge_model: 'judge-model',
      },
      {
        avg_relevancy: AVG_RELEVANCY,
        hit_at_k: '[0.5,0.5,1,1]',
        bin_precision_at_k: '[0.5,0.25,0.33,0.5]',
        name: w.kb,
        top_k: 4,
        judge_model: 'judge-model',
      },
    ]);
    const kbId = await kbIdOf(t, w.project, w.kb);
    const evaluated = (await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated');
    expect(evaluated.map((e) => e.data.savedTo)).toEqual([`files.${results}`, `files.${results}`]);
    // Each judging is in the LLM calls' log: 8 chunks, twice.
    const calls = rowsOf(
      await ok(
        t,
        `SELECT OUTCOME, count(*) AS n FROM information_schema.LLM_CALLS WHERE BASE_URL = '${f.baseUrl}' GROUP BY OUTCOME`,
      ),
    );
    expect(calls.map((r) => [r.OUTCOME, Number(r.n)])).toEqual([['ok', 16]]);
  });

  it('save_to appends the result row to an external database’s table, its values sent as typed parameters', async () => {
    const w = await givenGradedWorld(t);
    const f = await judge();
    // The table save_to appends to has the answer's columns (an external table must exist).
    const first = await ok(
      t,
      `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}, version = 'llm_relevancy', top_k = 4, ${llmOf(f)}`,
    );
    const pgType = { DOUBLE: 'double precision', BIGINT: 'bigint', VARCHAR: 'text' } as Record<
      string,
      string
    >;
    const remote = await freshPostgresData([
      `CREATE TABLE results (${first.column_names!.map((c, i) => `${c} ${pgType[first.column_types![i]!]}`).join(', ')})`,
    ]);
    try {
      const db = unique('pgres');
      await ok(
        t,
        `CREATE DATABASE ${db} WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(remote.parameters)}`,
      );
      // A model name with a quote and a backslash: spliced into the text, it would break the statement.
      await ok(
        t,
        `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}, version = 'llm_relevancy', top_k = 4, llm = {'provider': 'openai', 'model_name': 'o\\'judge\\\\', 'api_key': 'sk-j', 'base_url': '${f.baseUrl}'}, save_to = ${db}.results`,
      );
      expect(
        await rowsInExternal(
          'postgres',
          remote.name,
          'SELECT avg_relevancy, hit_at_k, name, judge_model, top_k FROM results',
        ),
      ).toEqual([[AVG_RELEVANCY, '[0.5,0.5,1,1]', w.kb, "o'judge\\", 4]]);
      const kbId = await kbIdOf(t, w.project, w.kb);
      const [unsaved, saved] = (await eventsOf(t, `kb-${kbId}`)).filter(
        (e) => e.type === 'KnowledgeBaseEvaluated',
      );
      expect(unsaved!.data.savedTo).toBeUndefined();
      expect(saved!.data.savedTo).toBe(`${db}.results`);
      // A table the database does not have fails the statement, naming save_to, and records nothing more.
      const missing = await querySql(
        t,
        `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}, version = 'llm_relevancy', top_k = 4, ${llmOf(f)}, save_to = ${db}.no_such_table`,
      );
      expect(missing).toMatchObject({ type: 'error' });
      expect(missing.error_message).toContain(`save_to ${db}.no_such_table`);
      expect(
        (await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated'),
      ).toHaveLength(2);
    } finally {
      await remote.drop();
    }
  });

  it('generate_data with llm_relevancy: the llm writes questions and answers, written to test_table, then judged', async () => {
    const w = await givenGradedWorld(t);
    const f = await startFakeOpenAi();
    fakes.push(f);
    // One model, two jobs: asked to write a question (MindsDB's prompt), it writes the chunk's
    // first word as the question and its grade as the answer; asked to judge, it grades.
    f.setFallback((body) => {
      const text = lastUserText(body);
      if (String(body.messages[0]!.content).includes('test questions')) {
        const words = text.replace(/^Text:\s*/, '').split(/\s+/);
        return fakeReply.text(JSON.stringify({ query: words[0], reference_answer: words.at(-1) }));
      }
      return fakeReply.text(/grade(\d+)/.exec(text)?.[1] ?? 'no');
    });
    const generatedTable = unique('generated');
    const answer = rowsOf(
      await ok(
        t,
        `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${generatedTable}, generate_data = {'count': 4}, version = 'llm_relevancy', top_k = 4, ${llmOf(f)}`,
      ),
    )[0]!;
    expect(answer).toMatchObject({ questions: 4, top_k: 4, judge_model: 'judge-model' });
    const written = rowsOf(
      await ok(t, `SELECT question, answer, doc_id FROM files.${generatedTable} ORDER BY doc_id`),
    );
    expect(written).toEqual([
      { question: 'xenon', answer: 'grade90', doc_id: 'a' },
      { question: 'xenon', answer: 'gradeno', doc_id: 'b' },
      { question: 'xenon', answer: 'grade30', doc_id: 'c' },
      { question: 'vortex', answer: 'grade60', doc_id: 'd' },
    ]);
    const kbId = await kbIdOf(t, w.project, w.kb);
    const [event] = (await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated');
    expect(event!.data).toMatchObject({
      version: 'llm_relevancy',
      testTable: `files.${generatedTable}`,
      testSet: { questions: 4 },
    });
    // 4 questions written; then each distinct (question, chunk) judged once, as the LLM calls' path
    // asks a query's identical prompts once: "xenon" (three times) and "vortex", 4 chunks each.
    expect(f.chatRequests()).toHaveLength(4 + 2 * 4);
  });

  it('a judge that fails fails the statement, naming it, records the failed call and no evaluation', async () => {
    const w = await givenGradedWorld(t);
    const failing = (await startFakeOpenAi()).setFallback(fakeReply.error(400, 'the judge refuses'));
    fakes.push(failing);
    const answer = await querySql(
      t,
      `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}, version = 'llm_relevancy', top_k = 4, ${llmOf(failing)}`,
    );
    expect(answer).toMatchObject({ type: 'error' });
    expect(answer.error_message).toContain(
      `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb}: llm_relevancy's judge`,
    );
    expect(answer.error_message).toContain('the judge refuses');
    const calls = rowsOf(
      await ok(t, `SELECT OUTCOME FROM information_schema.LLM_CALLS WHERE BASE_URL = '${failing.baseUrl}'`),
    );
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.OUTCOME === 'error')).toBe(true);
    const kbId = await kbIdOf(t, w.project, w.kb);
    expect((await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated')).toEqual([]);
  });

  it('refuses, naming what is wrong, a test table without answer, a save_to that is no table, and records nothing', async () => {
    const w = await givenGradedWorld(t);
    const f = await judge();
    const docIdQuestions = unique('docid_questions');
    await t.http
      .put(`/api/files/${docIdQuestions}`)
      .attach('file', Buffer.from('question,doc_id\nxenon,c\n'), `${docIdQuestions}.csv`)
      .expect(200);
    const on = `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING`;
    const noAnswer = await querySql(
      t,
      `${on} test_table = files.${docIdQuestions}, version = 'llm_relevancy', ${llmOf(f)}`,
    );
    expect(noAnswer).toMatchObject({ type: 'error' });
    expect(noAnswer.error_message).toContain(`EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb}`);
    expect(noAnswer.error_message).toContain('question and answer');
    const badSave = await querySql(t, `${on} test_table = files.${w.questions}, save_to = 'nowhere'`);
    expect(badSave).toMatchObject({ type: 'error' });
    expect(badSave.error_message).toContain('save_to');
    const badVersion = await querySql(t, `${on} test_table = files.${w.questions}, version = 'rerank'`);
    expect(badVersion.error_message).toContain("'llm_relevancy'");
    expect(f.chatRequests()).toHaveLength(0);
    const kbId = await kbIdOf(t, w.project, w.kb);
    expect((await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated')).toEqual([]);
  });
});
