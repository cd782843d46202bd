/**
 * A knowledge base is searched two ways: as a SQL table (`SELECT … FROM kb WHERE content = …`, the
 * question held in temporary tables behind a view) and on its own (`POST …/completions`, an agent's
 * kb_query_tool, EVALUATE: one statement with the question as parameters). The promise: both give
 * the same chunks in the same order with the same scores, whatever the documents, the question
 * (the suite's hostile strings: lone surrogates, NUL, empty, huge; or only stop words) and the weight of
 * keyword against vector. Beside it, a kill check: a SQL search that weighs keyword against vector
 * by the default 0.5, not by the knowledge base's own weight, is caught at the count `npm test` runs.
 * Equal relevances come in one order on both paths (insert position, chunk index, then the chunk's
 * place in its insert), including where the search on its own keeps only its top N (search.ts
 * `topSearchSql`): an example with five alike documents in one insert.
 *
 * One store: a search reads DuckDB only; how the documents reached it is the rebuild property's
 * concern.
 */
import fc from 'fast-check';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { hostileStrings } from '../support/hostile';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const RUNS = 25;
const SEED = propertySeed();
const LIMIT = 5;

let t: TestApp;
let counter = 0;
beforeAll(async () => {
  t = await startTestApp('sqlite');
});
afterAll(async () => {
  await t.dispose();
});

/** Words the documents share, so keyword scores are seldom all zero; and the suite's hostile strings. */
const WORDS = ['refund', 'shipping', 'days', 'order', 'support', 'express', 'café', '返品'];
const words = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 12 }).map((w) => w.join(' '));
const text = fc.oneof(words, hostileStrings(WORDS));
const world = fc.record({
  // One document of words at least: documents that make no chunk (a fresh seed, 834998743, drew
  // docs [''] with a question of stop words) leave both paths rightly finding nothing, and the
  // property asks for a hit so that agreeing on nothing cannot pass it.
  docs: fc.tuple(fc.array(text, { maxLength: 5 }), words, fc.nat()).map(([others, one, at]) => {
    const i = at % (others.length + 1);
    return [...others.slice(0, i), one, ...others.slice(i)];
  }),
  // Stop words only: a question with no term to search by keyword. (A blank question is refused by
  // SQL and searched by REST, a difference this property leaves to the specs of each.)
  question: fc.oneof(text, fc.constant('the of and')).filter((q) => q.trim() !== ''),
  alpha: fc.constantFrom(0, 0.3, 0.5, 1),
});

type Hit = { id: string; chunk_id: string; chunk_content: string; distance: number; relevance: number };

const viaSql = async (project: string, kb: string, question: string): Promise<Hit[]> => {
  const answer = await querySql(
    t,
    `SELECT id, chunk_id, chunk_content, distance, relevance FROM ${project}.${kb} WHERE content = :question LIMIT ${LIMIT}`,
    { params: { question } },
  );
  if (answer.type !== 'table') throw new Error(`the SQL search failed: ${JSON.stringify(answer)}`);
  const names = answer.column_names!;
  return answer.data!.map((r) => Object.fromEntries(names.map((c, i) => [c, r[i]])) as Hit);
};

const viaCompletions = async (project: string, kb: string, question: string): Promise<Hit[]> => {
  const res = await t.http
    .post(`/api/projects/${project}/knowledge_bases/${kb}/completions`)
    .send({ query: question, type: 'context', limit: LIMIT });
  if (res.status !== 200) throw new Error(`the search on its own answered ${res.status}: ${res.text}`);
  return (res.body.documents as (Hit & { metadata: unknown })[]).map(
    ({ id, chunk_id, chunk_content, distance, relevance }) => ({
      id,
      chunk_id,
      chunk_content,
      distance,
      relevance,
    }),
  );
};

/**
 * The SQL path's search made with the default weight, 0.5, whatever the knowledge base's own
 * (the kill check's bug). Undone by `mockRestore`.
 */
const defaultWeightInSql = () => {
  const kbs = t.running.services.knowledgeBases;
  const { source } = kbs;
  return jest
    .spyOn(kbs, 'source')
    .mockImplementation(async (...args) => ({ ...(await source(...args)), alpha: 0.5 }));
};

type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

/**
 * Searched both ways, the knowledge base made from `docs` finds the same chunks with the same
 * scores; the SQL path's hits.
 */
const searchedBothWays = async ({ docs, question, alpha }: World) => {
  const project = `p_paths_${++counter}`;
  const kb = 'kb';
  await t.http.post('/api/projects').send({ name: project }).expect(201);
  await t.http
    .post(`/api/projects/${project}/knowledge_bases`)
    .send({ knowledge_base: { name: kb, params: { hybrid_search_alpha: alpha } } })
    .expect(201);
  await t.http
    .put(`/api/projects/${project}/knowledge_bases/${kb}`)
    .send({ knowledge_base: { rows: docs.map((content, i) => ({ id: `d${i}`, content })) } })
    .expect(200);

  const [sql, own] = [await viaSql(project, kb, question), await viaCompletions(project, kb, question)];
  expect(own.length).toBeGreaterThan(0);
  expect(own.map((h) => [h.id, h.chunk_id, h.chunk_content])).toEqual(
    sql.map((h) => [h.id, h.chunk_id, h.chunk_content]),
  );
  own.forEach((h, i) => {
    expect(h.distance).toBeCloseTo(sql[i]!.distance, 9);
    expect(h.relevance).toBeCloseTo(sql[i]!.relevance, 9);
  });
  return sql;
};
const bothPathsAgree = async (w: World) => void (await searchedBothWays(w));

it('given generated documents, questions and weights, when searched as a SQL table and on its own, then both find the same chunks in the same order with the same scores', async () => {
  await fc.assert(fc.asyncProperty(world, bothPathsAgree), { seed: SEED, numRuns: propertyRuns(RUNS) });
});

it('given documents of one insert alike, when searched both ways, then the equal chunks come in the order the insert holds them', async () => {
  const docs = ['refund days', 'refund days', 'shipping order', 'refund days', 'refund days', 'refund days'];
  for (const alpha of [0, 0.5, 1] as const) {
    const sql = await searchedBothWays({ docs, question: 'refund days', alpha });
    expect(sql.map((h) => h.id)).toEqual(['d0', 'd1', 'd3', 'd4', 'd5']);
  }
});

it('kill check: a SQL search weighed by the default 0.5, not by the knowledge base, is caught', async () => {
  const spy = defaultWeightInSql();
  try {
    await expectCaught(fc.asyncProperty(world, bothPathsAgree), { seed: SEED, numRuns: propertyRuns(RUNS) });
  } finally {
    spy.mockRestore();
  }
});
