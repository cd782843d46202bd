/**
 * A SQL query over a knowledge base whose answer is its LIMIT's first rows of the search (the
 * knowledge base its only table, no filter but the search's own conditions, no grouping, DISTINCT
 * or OFFSET, ordered as the search orders or not at all) has its search ranked for those rows only
 * (src/sql/faces/knowledgeBase/knowledgeBaseTables.ts `topN`, src/engines/search/search.ts
 * `topSearchSql`). The promise: every query answers exactly as it does with every chunk ranked,
 * rows and order, ties included, whatever its filters on metadata and relevance, threshold, weight,
 * order, LIMIT and OFFSET. Beside it, a kill check: the top N taken before the query's other
 * conditions (a metadata filter then sees only those rows) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { topN } from '../../src/sql/faces/knowledgeBase/knowledgeBaseTables';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const RUNS = 20;
const SEED = propertySeed();
/** A run plans and answers up to 16 queries over a fresh knowledge base: seconds on a loaded machine. */
const TIMEOUT = 120_000;

let t: TestApp;
let counter = 0;
/**
 * How the face decides on a top N: as written, switched off (every chunk ranked, the reference),
 * or broken (the kill check's bug: the query's other conditions ignored).
 */
let seam: 'as written' | 'off' | 'broken' = 'as written';
/** How many queries were planned with a top N (a property that never takes one proves nothing). */
let tookTopN = 0;
/** How many plannings asked `topN` (each query below must be planned, not found planned). */
let asked = 0;
beforeAll(async () => {
  t = await startTestApp('sqlite');
  const limitOf = topN.limitOf;
  jest.spyOn(topN, 'limitOf').mockImplementation((select, searchOnly) => {
    asked++;
    if (seam === 'off') return null;
    const n = limitOf(select, seam === 'broken' || searchOnly);
    if (n !== null) tookTopN++;
    return n;
  });
});
afterAll(async () => {
  jest.restoreAllMocks();
  await t.dispose();
});

/** Few words, so documents repeat and relevances tie. */
const WORDS = ['refund', 'shipping', 'days', 'order', 'express'];
const words = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map((w) => w.join(' '));
const TOPICS = ['policy', 'shipping', 'support'];
const doc = fc.record({
  content: words,
  topic: fc.constantFrom(...TOPICS),
  year: fc.integer({ min: 2020, max: 2023 }),
});

const query = fc.record({
  question: words,
  columns: fc.constantFrom('*', 'id, chunk_id, chunk_content, distance, relevance, topic', 'id, relevance'),
  alpha: fc.constantFrom(
    '',
    ' AND hybrid_search_alpha = 0',
    ' AND hybrid_search_alpha = 0.5',
    ' AND hybrid_search_alpha = 1',
  ),
  threshold: fc.constantFrom('', '', ' AND relevance_threshold = 0.3'),
  filter: fc.constantFrom(
    '',
    '',
    ...TOPICS.map((topic) => ` AND topic = '${topic}'`),
    ' AND year >= 2022',
    ' AND relevance >= 0.2',
  ),
  // Orders other than the search's end on unique columns: their ties are no path's to settle.
  order: fc.constantFrom(
    '',
    '',
    ' ORDER BY relevance DESC',
    ' ORDER BY relevance DESC',
    ' ORDER BY distance, id, chunk_id',
    ' ORDER BY topic DESC, id, chunk_id',
  ),
  limit: fc.option(fc.integer({ min: 0, max: 7 }), { nil: undefined, freq: 5 }),
  offset: fc.constantFrom(false, false, false, true),
});
const world = fc.record({
  docs: fc.array(doc, { minLength: 3, maxLength: 9 }),
  queries: fc.array(query, { minLength: 3, maxLength: 8 }),
});
type World = typeof world extends fc.Arbitrary<infer W> ? W : never;
type Query = Record<'question' | 'columns' | 'alpha' | 'threshold' | 'filter' | 'order', string> & {
  limit?: number;
  offset: boolean;
};

const textOf = (project: string, q: Query) =>
  `SELECT ${q.columns} FROM ${project}.kb WHERE content = '${q.question}'${q.alpha}${q.threshold}${q.filter}${
    q.order
  }${q.limit === undefined ? '' : ` LIMIT ${q.limit}${q.offset ? ' OFFSET 1' : ''}`}`;

const answerOf = async (sql: string) => {
  const answer = await querySql(t, sql);
  if (answer.type !== 'table') throw new Error(`${sql} failed: ${JSON.stringify(answer)}`);
  return { columns: answer.column_names, data: answer.data };
};

/** Each query answers as it does with every chunk ranked (the same text planned with `topN` off). */
const answersAsEveryChunkRanked = async ({ docs, queries }: { docs: World['docs']; queries: Query[] }) => {
  const project = `p_topn_${process.pid}_${++counter}`;
  await querySql(t, `CREATE PROJECT ${project}`);
  await querySql(
    t,
    `CREATE KNOWLEDGE_BASE ${project}.kb USING metadata_columns = ['topic', 'year'], content_columns = ['content'], id_column = 'id'`,
  );
  await querySql(
    t,
    `INSERT INTO ${project}.kb (id, content, topic, year) VALUES ${docs
      .map((d, i) => `('d${i}', '${d.content}', '${d.topic}', ${d.year})`)
      .join(', ')}`,
  );
  for (const q of queries) {
    const sql = textOf(project, q);
    const was = seam;
    seam = 'off';
    let everyChunk;
    const before = asked;
    try {
      // Another text (a plan is kept per text), planned with every chunk ranked.
      everyChunk = await answerOf(sql.replace('SELECT ', 'SELECT  '));
    } finally {
      seam = was;
    }
    expect(await answerOf(sql)).toEqual(everyChunk);
    expect(asked).toBe(before + 2);
  }
};

it(
  'given generated knowledge bases and queries over them, when a query is answered from the top N of the search, then it answers exactly as with every chunk ranked',
  async () => {
    tookTopN = 0;
    await fc.assert(fc.asyncProperty(world, answersAsEveryChunkRanked), {
      seed: SEED,
      numRuns: propertyRuns(RUNS),
    });
    expect(tookTopN).toBeGreaterThan(0);
  },
  TIMEOUT,
);

it('given duplicate documents, when asked for the top N by relevance, then the ties come as they do with every chunk ranked', async () => {
  const docs = ['refund days', 'refund days', 'shipping order', 'refund days', 'refund days'].map(
    (content) => ({ content, topic: 'policy', year: 2021 }),
  );
  const base = {
    columns: 'id',
    alpha: '',
    threshold: '',
    filter: '',
    offset: false,
    question: 'refund days',
  };
  const queries = ['', ' ORDER BY relevance DESC'].flatMap((order) =>
    [1, 2, 3].map((limit) => ({ ...base, order, limit })),
  );
  tookTopN = 0;
  await answersAsEveryChunkRanked({ docs, queries });
  expect(tookTopN).toBe(queries.length);
});

it(
  'kill check: the top N taken before the query’s other conditions is caught',
  async () => {
    seam = 'broken';
    try {
      await expectCaught(fc.asyncProperty(world, answersAsEveryChunkRanked), {
        seed: SEED,
        numRuns: propertyRuns(RUNS),
      });
    } finally {
      seam = 'as written';
    }
  },
  TIMEOUT,
);
