/**
 * A knowledge base's search keeps its terms as postings by term id (a vocabulary per knowledge
 * base, each posting with its chunk's length) and counts each term's document frequency from the
 * postings of the question's terms (src/engines/search/search.ts). The promise: whatever documents
 * were inserted, replaced and deleted, a search answers every chunk with the relevance and distance
 * a straightforward BM25 + cosine computation gives (here in JS, from the chunks' text: its own
 * terms, lengths and document frequencies; the cosine DuckDB's, as the vector side is not at
 * issue), in the order of relevance with the existing tie-breaks (insert position, chunk index).
 * CREATE INDEX ON KNOWLEDGE_BASE compacts the postings into term order among the writes, and at the
 * end: every question answers exactly as before it (the same rows, relevances to the last bit, in
 * the same order: a chunk's BM25 sum does not depend on the order its postings are read in).
 * Beside it, kill checks: postings left behind by a deletion or a replacement (a stale document
 * frequency, a chunk no longer there scored), and a compaction that loses postings, are caught at
 * the count `npm test` runs.
 *
 * One store: a search reads DuckDB only; rebuilding the tables from the log is the rebuild
 * property's concern (test/promise/rebuild.property.spec.ts inserts, replaces and deletes documents).
 */
import fc from 'fast-check';
import { ARRAY, arrayValue, FLOAT } from '@duckdb/node-api';
import { HASHING_DIMENSIONS, hashingEmbed } from '../../src/engines/search/hashingEmbedder';
import { kbTables } from '../../src/engines/search/layout';
import { termsOf } from '../../src/engines/search/terms';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';

const RUNS = 20;
const SEED = propertySeed();
const TOLERANCE = 1e-6;
/** Each run makes a project, a knowledge base and up to five writes: more than jest's 30 s on a loaded machine. */
const TIMEOUT_MS = 120_000;

let t: TestApp;
beforeAll(async () => void (t = await startTestApp('sqlite')));
afterAll(() => t.dispose());
/** Each run's project is a new one. */
let counter = 0;

/** Few words, so documents share terms and frequencies vary; `the` and `of` are stop words. */
const WORDS = ['refund', 'refunds', 'shipping', 'days', 'order', 'express', 'café', '返品', 'the', 'of'];
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 14 }).map((w) => w.join(' '));
const ids = fc.constantFrom('d0', 'd1', 'd2', 'd3');
const step = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      insert: fc.array(fc.record({ id: ids, content: text }), { minLength: 1, maxLength: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ remove: fc.uniqueArray(ids, { minLength: 1, maxLength: 2 }) }) },
  { weight: 1, arbitrary: fc.constant({ index: true as const }) },
);
const world = fc.record({
  steps: fc.array(step, { minLength: 1, maxLength: 5 }),
  questions: fc.array(
    fc.array(fc.constantFrom(...WORDS, 'absent'), { minLength: 1, maxLength: 4 }).map((w) => w.join(' ')),
    { minLength: 1, maxLength: 3 },
  ),
  alpha: fc.constantFrom(0, 0.3, 0.5, 1),
});
type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

type Hit = { chunk_id: string; distance: number; relevance: number };
type StoredChunk = { id: string; content: string; position: bigint; index: number; cosine: number };

/** The knowledge base's chunks as stored (none before its first insert), with each one's cosine similarity to the question. */
const storedChunks = (kbId: number, question: string) =>
  t.running.ctx.duck.withReader(async (c) => {
    const made = await c.runAndReadAll(
      `SELECT 1 FROM duckdb_tables() WHERE schema_name = 'mdb_kb' AND table_name = 'kb_${kbId}'`,
    );
    if (made.getRows().length === 0) return [];
    const reader = await c.runAndReadAll(
      `SELECT CHUNK_ID, CONTENT, POSITION, CHUNK_INDEX, array_cosine_similarity(EMBEDDING, $v) AS cosine
       FROM ${kbTables(kbId).chunks}`,
      { v: arrayValue([...hashingEmbed([question], HASHING_DIMENSIONS)[0]!]) },
      { v: ARRAY(FLOAT, HASHING_DIMENSIONS) },
    );
    return (reader.getRowsJS() as [string, string, bigint, number, number][]).map(
      ([id, content, position, index, cosine]): StoredChunk => ({ id, content, position, index, cosine }),
    );
  });

/**
 * BM25 (k1 1.2, b 0.75) over the chunks' own terms, each chunk's length its number of terms, the
 * score divided by the best; relevance = alpha × max(cosine, 0) + (1 − alpha) × that.
 */
const reference = (chunks: readonly StoredChunk[], question: string, alpha: number) => {
  const asked = [...termsOf(question).keys()];
  const terms = chunks.map((c) => termsOf(c.content));
  const lengths = terms.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
  const n = chunks.length;
  const avgdl = n === 0 ? 0 : lengths.reduce((a, b) => a + b, 0) / n;
  const df = new Map(asked.map((q) => [q, terms.filter((m) => m.has(q)).length]));
  const scores = terms.map((m, i) => {
    let score: number | null = null;
    for (const q of asked) {
      const tf = m.get(q);
      if (tf === undefined) continue;
      const d = df.get(q)!;
      score =
        (score ?? 0) +
        (Math.log(1 + (n - d + 0.5) / (d + 0.5)) * tf * 2.2) /
          (tf + 1.2 * (0.25 + (0.75 * lengths[i]!) / Math.max(avgdl, 1)));
    }
    return score;
  });
  const top = Math.max(0, ...scores.map((s) => s ?? 0));
  return new Map(
    chunks.map((c, i) => {
      const keyword = scores[i] !== null && top > 0 ? scores[i]! / top : 0;
      return [
        c.id,
        { relevance: alpha * Math.max(c.cosine, 0) + (1 - alpha) * keyword, distance: 1 - c.cosine },
      ];
    }),
  );
};

const search = async (project: string, question: string): Promise<Hit[]> => {
  const answer = await querySql(
    t,
    `SELECT chunk_id, distance, relevance FROM ${project}.kb WHERE content = :question`,
    { params: { question } },
  );
  if (answer.type !== 'table') throw new Error(`the search failed: ${JSON.stringify(answer)}`);
  return answer.data!.map(([chunk_id, distance, relevance]) => ({
    chunk_id: String(chunk_id),
    distance: Number(distance),
    relevance: Number(relevance),
  }));
};

/** The knowledge base made by the world's steps answers each question as the reference does. */
const searchEqualsReference = async ({ steps, questions, alpha }: World) => {
  const project = `p_ref_${++counter}`;
  await t.http.post('/api/projects').send({ name: project }).expect(201);
  const kb = (
    await t.http
      .post(`/api/projects/${project}/knowledge_bases`)
      .send({
        knowledge_base: {
          name: 'kb',
          params: { hybrid_search_alpha: alpha, chunk_size: 40, chunk_overlap: 10 },
        },
      })
      .expect(201)
  ).body as { id: number };
  const compact = async () =>
    expect((await querySql(t, `CREATE INDEX ON KNOWLEDGE_BASE ${project}.kb`)).type).toBe('ok');
  for (const s of steps)
    if ('index' in s) await compact();
    else if ('insert' in s)
      await t.http
        .put(`/api/projects/${project}/knowledge_bases/kb`)
        .send({ knowledge_base: { rows: s.insert } })
        .expect(200);
    else
      expect(
        (
          await querySql(
            t,
            `DELETE FROM ${project}.kb WHERE id IN (${s.remove.map((id) => `'${id}'`).join(', ')})`,
          )
        ).type,
      ).toBe('ok');
  const answers = [];
  for (const question of questions) {
    const [hits, chunks] = [await search(project, question), await storedChunks(kb.id, question)];
    answers.push(hits);
    const expected = reference(chunks, question, alpha);
    expect(hits.map((h) => h.chunk_id).sort()).toEqual([...expected.keys()].sort());
    for (const hit of hits) {
      const want = expected.get(hit.chunk_id)!;
      expect(Math.abs(hit.relevance - want.relevance)).toBeLessThan(TOLERANCE);
      expect(Math.abs(hit.distance - want.distance)).toBeLessThan(TOLERANCE);
    }
    // In order of relevance; equal relevances by insert position, then chunk index.
    const at = new Map(chunks.map((c) => [c.id, c]));
    hits.slice(1).forEach((hit, i) => {
      const before = hits[i]!;
      expect(before.relevance).toBeGreaterThanOrEqual(hit.relevance);
      if (before.relevance === hit.relevance) {
        const [a, b] = [at.get(before.chunk_id)!, at.get(hit.chunk_id)!];
        expect(a.position < b.position || (a.position === b.position && a.index <= b.index)).toBe(true);
      }
    });
  }
  await compact();
  const compacted = [];
  for (const question of questions) compacted.push(await search(project, question));
  expect(compacted).toEqual(answers);
};

/** The writer runs every statement but the deletion of a knowledge base's postings (the kill check's bug). */
const postingsLeftBehind = () => {
  const writer = t.running.ctx.duck.writer;
  const original = writer.run.bind(writer);
  writer.run = (async (sql: string, ...rest: unknown[]) => {
    if (/^DELETE FROM mdb_kb\."kb_\d+_terms"/.test(sql)) return undefined;
    return (original as (...args: unknown[]) => unknown)(sql, ...rest);
  }) as typeof writer.run;
  return () => (writer.run = original);
};

/** The writer compacts a knowledge base's postings but loses those of a term's first chunk (the second kill check's bug). */
const compactionLosingPostings = () => {
  const writer = t.running.ctx.duck.writer;
  const original = writer.run.bind(writer);
  writer.run = (async (sql: string, ...rest: unknown[]) => {
    const lossy = /^CREATE OR REPLACE TABLE mdb_kb\."kb_\d+_terms"/.test(sql)
      ? sql.replace(
          / FROM (\S+) ORDER BY/,
          ' FROM $1 QUALIFY row_number() OVER (PARTITION BY TERM_ID ORDER BY ROW_ID) > 1 ORDER BY',
        )
      : sql;
    return (original as (...args: unknown[]) => unknown)(lossy, ...rest);
  }) as typeof writer.run;
  return () => (writer.run = original);
};

it(
  'given documents inserted, replaced, deleted and compacted, when a question is asked, then every chunk comes with the relevance and distance of a reference BM25 + cosine, in order of relevance with its tie-breaks, and exactly so after a compaction',
  async () => {
    await fc.assert(fc.asyncProperty(world, searchEqualsReference), {
      seed: SEED,
      numRuns: propertyRuns(RUNS),
    });
  },
  TIMEOUT_MS,
);

it.each([
  ['postings a deletion or replacement leaves behind (a stale document frequency)', postingsLeftBehind],
  ['a compaction that loses postings', compactionLosingPostings],
])(
  'kill check: %s, caught',
  async (_bug, mutate) => {
    const restore = mutate();
    try {
      await expectCaught(fc.asyncProperty(world, searchEqualsReference), {
        seed: SEED,
        numRuns: propertyRuns(RUNS),
      });
    } finally {
      restore();
    }
  },
  TIMEOUT_MS,
);
