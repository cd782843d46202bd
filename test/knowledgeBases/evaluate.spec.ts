/**
 * EVALUATE KNOWLEDGE_BASE (MindsDB's syntax, `version = 'doc_id'`) on the shipped evaluation set
 * (test/fixtures/kb-eval): deterministic scores, recorded as one event on the knowledge base's
 * stream with the settings they depend on, listed over REST and in information_schema; bad
 * options refused naming the statement (SQL) or as problem+json (REST).
 */
import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, givenEvaluationWorld, kbIdOf, ok, rowsOf, unique } from './support-eval';

// An evaluation searches its 80 questions one by one, as a query of the knowledge base would be
// searched: alone, a test here with three evaluations takes about 4 s; in the whole suite on a slow
// 2-core machine, beside two other workers, it passed jest's default of 30 s once.
jest.setTimeout(120_000);

describe.each(storeKinds)('EVALUATE KNOWLEDGE_BASE (%s)', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('scores the shipped set with MindsDB’s columns and ours, the same each time, and records each evaluation once', async () => {
    const w = await givenEvaluationWorld(t);
    const evaluate = async () =>
      rowsOf(
        await ok(
          t,
          `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}, version = 'doc_id'`,
        ),
      )[0]!;
    const first = await evaluate();
    const second = await evaluate();
    expect(first).toMatchObject({
      total: 80,
      name: w.kb,
      top_k: 10,
      hybrid_search_alpha: 0.5,
      questions: 80,
    });
    const scores = (r: Record<string, unknown>) => {
      const { id: _id, created_at: _at, avg_query_time: _t, ...rest } = r;
      return rest;
    };
    // Deterministic: the same set, the same knowledge base, the same scores.
    expect(scores(second)).toEqual(scores(first));
    expect(first.mrr).toBeCloseTo(0.919, 3);
    expect(first.recall_at_1).toBeCloseTo(0.8375, 4);
    expect(first.hit_rate).toBe(1);
    expect(first.total_found).toBe(80);
    expect(first.retrieved_in_top_10).toBe(80);
    const cumulative = JSON.parse(String(first.cumulative_recall)) as Record<string, number>;
    expect(Object.keys(cumulative)).toHaveLength(10);
    expect(cumulative['0']).toBeCloseTo(Number(first.recall_at_1), 10);
    expect(cumulative['9']).toBeCloseTo(1, 10);

    const kbId = await kbIdOf(t, w.project, w.kb);
    const evaluated = (await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated');
    expect(evaluated).toHaveLength(2);
    expect(evaluated[0]!.data).toMatchObject({
      kbId,
      project: w.project,
      name: w.kb,
      version: 'doc_id',
      testTable: `files.${w.questions}`,
      testSet: { questions: 80, generated: null },
      settings: {
        embedding: { provider: 'mindledger', model: 'hashing', dimensions: 384 },
        chunking: { chunkSize: 1000, chunkOverlap: 200 },
        alpha: 0.5,
        topK: 10,
        documents: 120,
        chunks: 120,
      },
    });
    expect((evaluated[0]!.data.testSet as { digest: string }).digest).toBe(
      (evaluated[1]!.data.testSet as { digest: string }).digest,
    );
  });

  it('tells the search methods apart on the shipped set: hybrid beats the embedder alone and BM25 alone', async () => {
    const w = await givenEvaluationWorld(t);
    const at = async (alpha: number) =>
      rowsOf(
        await ok(
          t,
          `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}, hybrid_search_alpha = ${alpha}`,
        ),
      )[0]!;
    const [vector, keyword, hybrid] = [await at(1), await at(0), await at(0.5)];
    expect(Number(hybrid.mrr)).toBeGreaterThan(Number(vector.mrr));
    expect(Number(hybrid.mrr)).toBeGreaterThan(Number(keyword.mrr));
    expect(Number(hybrid.recall_at_1)).toBeGreaterThan(Number(vector.recall_at_1));
    expect(Number(hybrid.recall_at_1)).toBeGreaterThan(Number(keyword.recall_at_1));
    // Each row says what it ran with: the evaluations compare by their settings.
    const listed = (
      await t.http.get(`/api/projects/${w.project}/knowledge_bases/${w.kb}/evaluations`).expect(200)
    ).body as Record<string, unknown>[];
    expect(listed.map((e) => e.hybrid_search_alpha)).toEqual([0.5, 0, 1]);
    expect(listed.map((e) => e.mrr)).toEqual([hybrid.mrr, keyword.mrr, vector.mrr]);
    const inSql = rowsOf(
      await ok(
        t,
        `SELECT HYBRID_SEARCH_ALPHA, MRR, TEST_SET_DIGEST FROM information_schema.KNOWLEDGE_BASE_EVALUATIONS WHERE PROJECT = '${w.project}' ORDER BY ID`,
      ),
    );
    expect(inSql.map((r) => r.HYBRID_SEARCH_ALPHA)).toEqual([1, 0, 0.5]);
    expect(new Set(inSql.map((r) => r.TEST_SET_DIGEST)).size).toBe(1);
  });

  it('compares chunking settings on one test set: the event and the row name each setting', async () => {
    // Eight questions: what is checked is the settings and the chunks, not the scores.
    const small = await givenEvaluationWorld(t, `, params = {"chunk_size": 40, "chunk_overlap": 10}`, 8);
    const answer = rowsOf(
      await ok(
        t,
        `EVALUATE KNOWLEDGE_BASE ${small.project}.${small.kb} USING test_table = files.${small.questions}`,
      ),
    )[0]!;
    expect(answer).toMatchObject({ chunk_size: 40, chunk_overlap: 10, questions: 8 });
    expect(Number(answer.chunks)).toBeGreaterThan(120);
  });

  it('refuses bad options naming the statement (SQL) and as problem+json (REST), and records nothing', async () => {
    const w = await givenEvaluationWorld(t);
    const kbId = await kbIdOf(t, w.project, w.kb);
    const before = (await eventsOf(t, `kb-${kbId}`)).length;
    const statement = `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb}`;
    for (const [using, says] of [
      ['', 'test_table is required'],
      [`USING test_table = files.${w.questions}, version = 'rerank'`, "'doc_id' (the expected"],
      [`USING test_table = files.${w.questions}, version = 'llm_relevancy'`, 'question and answer'],
      [`USING test_table = files.${w.questions}, save_to = 'results'`, 'save_to'],
      [`USING test_table = files.${w.questions}, top_k = 0`, 'top_k'],
      [`USING test_table = files.${w.questions}, colour = 'blue'`, 'colour'],
      [`USING test_table = files.${unique('missing')}`, 'files'],
      [`USING test_table = files.${w.documents}`, 'question and doc_id'],
    ] as const) {
      const answer = await querySql(t, `${statement} ${using}`);
      expect(answer).toMatchObject({ type: 'error', error_code: expect.any(Number) });
      expect(answer.error_message).toContain(statement);
      expect(answer.error_message).toContain(says);
    }
    const unknown = await querySql(
      t,
      `EVALUATE KNOWLEDGE_BASE ${w.project}.nope USING test_table = files.${w.questions}`,
    );
    expect(unknown).toMatchObject({ type: 'error', error_code: 1032 });

    const rest = await t.http
      .post(`/api/projects/${w.project}/knowledge_bases/${w.kb}/evaluations`)
      .send({ evaluation: { test_table: `files.${w.questions}`, top_k: 1000 } });
    expect(rest.status).toBe(400);
    expect(problemOf(rest)).toMatchObject({
      status: 400,
      title: expect.any(String),
      detail: expect.stringContaining('top_k'),
    });
    const missing = await t.http
      .post(`/api/projects/${w.project}/knowledge_bases/nope/evaluations`)
      .send({ evaluation: { test_table: `files.${w.questions}` } });
    expect(missing.status).toBe(404);
    expect(problemOf(missing).status).toBe(404);
    expect((await eventsOf(t, `kb-${kbId}`)).length).toBe(before);
  });

  it('evaluates over REST as in SQL: 201 with the scores, the same event', async () => {
    const w = await givenEvaluationWorld(t);
    const res = await t.http
      .post(`/api/projects/${w.project}/knowledge_bases/${w.kb}/evaluations`)
      .send({ evaluation: { test_table: `files.${w.questions}`, top_k: 5 } })
      .expect(201);
    expect(res.body).toMatchObject({ total: 80, top_k: 5, name: w.kb, generated: null });
    expect((res.body as { mrr: number }).mrr).toBeGreaterThan(0.8);
    const kbId = await kbIdOf(t, w.project, w.kb);
    const events = (await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated');
    expect(events).toHaveLength(1);
    expect(events[0]!.data.scores).toMatchObject({ total: 80, cumulativeRecall: expect.any(Array) });
    expect((events[0]!.data.scores as { cumulativeRecall: number[] }).cumulativeRecall).toHaveLength(5);
  });

  it('deleting the knowledge base removes its evaluations from the read model (its stream keeps them)', async () => {
    const w = await givenEvaluationWorld(t, '', 8);
    await ok(t, `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}`);
    const count = async () =>
      rowsOf(
        await ok(
          t,
          `SELECT count(*) AS n FROM information_schema.KNOWLEDGE_BASE_EVALUATIONS WHERE PROJECT = '${w.project}'`,
        ),
      )[0]!.n;
    expect(Number(await count())).toBe(1);
    await ok(t, `DROP KNOWLEDGE_BASE ${w.project}.${w.kb}`);
    expect(Number(await count())).toBe(0);
  });
});
