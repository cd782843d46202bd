/**
 * LLM_FILTER, LLM_REDUCE and LLM_RERANK (issue 61, item 2; docs/llm-models.md): the LLM over rows,
 * groups and a knowledge base's search, asked through the same batched path as LLM(), against a
 * stand-in whose rules the spec knows (./llm-aggregates-support.ts), on both stores.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { batchRowsOf, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { eventsOf, uniqueName } from '../support/world';
import { givenTexts, rowsOf } from '../llmModels/world';
import { reducedValues, reducesPartials, rerankDocuments, ruled } from './llm-aggregates-support';

/** A CSV file of (`grp`, `val`) rows, uploaded as a table of `files`; answers its name. */
const givenGroups = async (t: TestApp, rows: readonly (readonly string[])[]) => {
  const name = uniqueName('groups');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'llm-groups-'));
  const file = path.join(dir, `${name}.csv`);
  fs.writeFileSync(file, ['grp,val', ...rows.map((r) => r.join(','))].join('\n') + '\n');
  await t.http.put(`/api/files/${name}`).attach('file', file).expect(200);
  fs.rmSync(dir, { recursive: true, force: true });
  return name;
};

const FUNCTION_ENV = {
  LLM_FUNCTION_MODEL_NAME: 'fn-model',
  LLM_FUNCTION_API_KEY: 'sk-aggregates',
  LLM_SQL_CONCURRENCY: '2',
};

describe.each(storeKinds)('LLM_FILTER, LLM_REDUCE and LLM_RERANK (%s)', (store) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  const sql = (query: string) => querySql(t, query);
  const batches = () => fake.chatRequests().filter((b) => batchRowsOf(b) !== undefined);
  const singles = () => fake.chatRequests().filter((b) => batchRowsOf(b) === undefined);
  /** The queries (their ids) that recorded LLM calls so far. */
  const queryIds = async () =>
    new Set(
      rowsOf(
        await sql(
          `SELECT DISTINCT QUERY_ID FROM information_schema.LLM_CALLS WHERE PROVIDER_MODEL = 'fn-model'`,
        ),
      ).map((r) => String(r.QUERY_ID)),
    );

  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKeys: ['sk-aggregates'] });
    t = await startTestApp(store, { ...FUNCTION_ENV, LLM_FUNCTION_BASE_URL: fake.baseUrl });
  });
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    ruled(fake);
  });

  it('LLM_FILTER keeps exactly the rows the model accepts, many rows per request, each call recorded with its tokens', async () => {
    // Given 40 rows, every third to keep
    const texts = Array.from({ length: 40 }, (_, i) => `item ${i + 1} ${i % 3 === 0 ? 'keep' : 'drop'}`);
    const file = await givenTexts(t, texts);
    const before = await queryIds();
    // When they are filtered by the LLM
    const answer = await sql(
      `SELECT id, text FROM files.${file} WHERE id > 0 AND LLM_FILTER('Is this row to keep?', text) ORDER BY id`,
    );
    // Then exactly the rows the rule accepts, in three batched requests, not forty
    expect(rowsOf(answer).map((r) => r.text)).toEqual(texts.filter((x) => x.endsWith('keep')));
    expect(batches().map((b) => batchRowsOf(b)!.length)).toEqual([16, 16, 8]);
    expect(singles()).toHaveLength(0);
    // And the calls are on the log: one query's stream, three requests with their tokens
    const [queryId, ...others] = [...(await queryIds())].filter((q) => !before.has(q));
    expect(others).toEqual([]);
    const events = await eventsOf(t, `llm-query-${queryId}`);
    expect(events.map((e) => e.type)).toEqual(['LlmCallRecorded', 'LlmCallRecorded', 'LlmCallRecorded']);
    const calls = rowsOf(
      await sql(
        `SELECT OUTCOME, TOTAL_TOKENS, SOURCE FROM information_schema.LLM_CALLS WHERE QUERY_ID = '${queryId}'`,
      ),
    );
    expect(calls.map((c) => [c.OUTCOME, c.SOURCE])).toEqual([
      ['ok', 'function'],
      ['ok', 'function'],
      ['ok', 'function'],
    ]);
    for (const c of calls) expect(Number(c.TOTAL_TOKENS)).toBeGreaterThan(0);
  });

  it('LLM_FILTER asks identical rows once, and a garbled row is asked again alone with no answer shifted', async () => {
    const texts = Array.from(
      { length: 24 },
      (_, i) => `again ${String(i % 20).padStart(2, '0')} ${i % 2 ? 'keep' : 'no'}`,
    );
    const file = await givenTexts(t, texts);
    fake.batchFault('again 07', 'garble').batchFault('again 12', 'duplicate');
    const kept = rowsOf(
      await sql(`SELECT id, text FROM files.${file} WHERE LLM_FILTER('Keep it?', text) ORDER BY id`),
    );
    expect(kept.map((r) => r.text)).toEqual(texts.filter((x) => x.endsWith('keep')));
    // 24 rows, 20 distinct: one batch of 16 and one of 4 (no batch below 17 rows: they go alone) …
    const asked = [...batches(), ...singles()].flatMap(
      (b) => batchRowsOf(b)?.map((r) => r.request) ?? [lastUserText(b)],
    );
    // … every distinct row asked once, and the two faulty ones once more alone.
    expect(new Set(asked).size).toBe(20);
    expect(
      singles()
        .map(lastUserText)
        .filter((u) => /again 0?7 |again 12 /.test(u)),
    ).toHaveLength(2);
  });

  it('LLM_FILTER in the column list answers a boolean per row (NULL for a NULL prompt)', async () => {
    const file = await givenTexts(t, ['one keep', 'two', 'three keep']);
    const answer = await sql(
      `SELECT id, LLM_FILTER('Wanted?', text) AS wanted, LLM_FILTER(CASE WHEN id = 2 THEN NULL ELSE 'Wanted?' END, text) AS maybe FROM files.${file} ORDER BY id`,
    );
    expect(answer.column_types?.slice(1)).toEqual(['BOOLEAN', 'BOOLEAN']);
    expect(rowsOf(answer)).toEqual([
      { id: 1, wanted: true, maybe: true },
      { id: 2, wanted: false, maybe: null },
      { id: 3, wanted: true, maybe: true },
    ]);
    // Three distinct inputs (the NULL prompt asks nothing), each asked once.
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it('an LLM_FILTER answer that is not a boolean is asked again alone, then fails the query naming the row', async () => {
    const file = await givenTexts(
      t,
      Array.from({ length: 20 }, (_, i) => `vague ${i} keep`),
    );
    fake.when({ lastUser: 'vague 5 ' }, { type: 'text', content: 'perhaps' });
    const refused = await sql(`SELECT id FROM files.${file} WHERE LLM_FILTER('Keep it?', text)`);
    expect(refused).toMatchObject({ type: 'error' });
    expect(refused.error_message).toMatch(
      /^LLM_FILTER: the answer for row \d+ is not true or false: "perhaps"$/,
    );
    expect(
      singles()
        .map(lastUserText)
        .filter((u) => u.includes('vague 5 ')),
    ).toHaveLength(1);
  });

  it('LLM_REDUCE answers one summary per group, of its sorted values, the same on a rebuilt read model', async () => {
    // Given rows of three groups, in an order that is not the values' order
    const rows = [
      ['b', 'pear'],
      ['a', 'zucchini'],
      ['b', 'apple'],
      ['a', 'carrot'],
      ['c', 'only'],
      ['a', 'beet'],
    ];
    const name = await givenGroups(t, rows);
    const query = `SELECT grp, LLM_REDUCE('Summarize the vegetables', val) AS summary FROM files.${name} GROUP BY grp ORDER BY grp`;
    // When each group is reduced
    const answer = rowsOf(await sql(query));
    // Then one answer per group: the stand-in's for the group's values, sorted
    const expected = ['a', 'b', 'c'].map((g) => ({
      grp: g,
      summary: `reduced: ${rows
        .filter((r) => r[0] === g)
        .map((r) => r[1])
        .sort()
        .join('|')}`,
    }));
    expect(answer).toEqual(expected);
    expect(fake.chatRequests()).toHaveLength(3);
    const prompts = fake.chatRequests().map(lastUserText).sort();
    expect(prompts.map(reducedValues)).toEqual([['apple', 'pear'], ['beet', 'carrot', 'zucchini'], ['only']]);
    // And the read model rebuilt from the log asks the same prompts and answers the same
    fake.reset();
    ruled(fake);
    t = await t.restart({
      DUCKDB_FILE: path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'llm-rebuilt-')), 'rm.duckdb'),
    });
    expect(rowsOf(await sql(query))).toEqual(expected);
    expect(fake.chatRequests().map(lastUserText).sort()).toEqual(prompts);
  });

  it('LLM_REDUCE without GROUP BY reduces the whole table, as flock does', async () => {
    const file = await givenTexts(t, ['gamma', 'alpha', 'beta']);
    expect(rowsOf(await sql(`SELECT LLM_REDUCE('One word for all', text) AS s FROM files.${file}`))).toEqual([
      { s: 'reduced: alpha|beta|gamma' },
    ]);
  });

  it('LLM_REDUCE batches many groups to a request, and reduces a group too large for one in rounds', async () => {
    // Given 20 small groups and one whose values exceed a request's character budget (8k-token model)
    const big = Array.from({ length: 30 }, (_, i) => `${String(i).padStart(2, '0')}${'v'.repeat(500)}`);
    const rows = [
      ...Array.from({ length: 20 }, (_, g) => [`g${String(g).padStart(2, '0')}`, `small ${g}`]),
      ...big.map((v) => ['huge', v]),
    ];
    const name = await givenGroups(t, rows);
    // When each group is reduced
    const answer = rowsOf(
      await sql(`SELECT grp, LLM_REDUCE('Summarize', val) AS s FROM files.${name} GROUP BY grp ORDER BY grp`),
    );
    // Then the small groups are answered from batches (fewer requests than groups) …
    expect(answer.filter((r) => r.grp !== 'huge')).toEqual(
      Array.from({ length: 20 }, (_, g) => ({
        grp: `g${String(g).padStart(2, '0')}`,
        s: `reduced: small ${g}`,
      })),
    );
    const asked = [
      ...batches().flatMap((b) => batchRowsOf(b)!.map((r) => r.request)),
      ...singles().map(lastUserText),
    ];
    expect(batches().length).toBeGreaterThan(0);
    expect(fake.chatRequests().length).toBeLessThan(asked.length);
    // … and the large one in chunks, every value in exactly one, in order, then the chunks' answers reduced again
    const chunks = asked.filter((u) => !reducesPartials(u) && u.includes('vvvv'));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.flatMap(reducedValues).sort()).toEqual(big);
    for (const chunk of chunks) expect(reducedValues(chunk)).toEqual([...reducedValues(chunk)].sort());
    const partials = asked.filter(reducesPartials);
    expect(partials).toHaveLength(1);
    expect(reducedValues(partials[0]!)).toHaveLength(chunks.length);
    const huge = answer.find((r) => r.grp === 'huge')!;
    expect(String(huge.s)).toMatch(/^reduced: reduced: 00v+\|01v+/);
  });

  it('LLM_RERANK orders a knowledge base search by the model’s ranking, the candidates in one request', async () => {
    // Given a knowledge base of six documents
    const project = uniqueName('p');
    const kb = uniqueName('kb');
    expect(await sql(`CREATE PROJECT ${project}`)).toMatchObject({ type: 'ok' });
    await sql(`CREATE KNOWLEDGE_BASE ${project}.${kb} USING content_columns = ['content'], id_column = 'id'`);
    const docs = [
      ['d1', 'refund policy in short'],
      ['d2', 'the refund policy explained at some considerable length'],
      ['d3', 'refunds'],
      ['d4', 'a refund policy of middling length'],
      ['d5', 'shipping takes three days'],
      ['d6', 'gift cards never expire'],
    ];
    await sql(
      `INSERT INTO ${project}.${kb} (id, content) VALUES ${docs.map(([id, c]) => `('${id}', '${c}')`).join(', ')}`,
    );
    const search = `SELECT id, chunk_content FROM ${project}.${kb} WHERE content = 'refund policy' ORDER BY relevance DESC LIMIT 4`;
    const candidates = rowsOf(await sql(search));
    expect(candidates).toHaveLength(4);
    // When the search's four most relevant chunks are reranked
    const reranked = rowsOf(
      await sql(
        `SELECT id FROM (${search}) AS hits ORDER BY LLM_RERANK('refund policy', chunk_content) LIMIT 3`,
      ),
    );
    // Then they come in the stand-in's ranking (the longest text first), from one request of four
    const ranked = [...candidates].sort(
      (a, b) => String(b.chunk_content).length - String(a.chunk_content).length,
    );
    expect(reranked.map((r) => r.id)).toEqual(ranked.slice(0, 3).map((r) => r.id));
    expect(fake.chatRequests()).toHaveLength(1);
    expect(
      rerankDocuments(lastUserText(fake.chatRequests()[0]!))
        .map((d) => d.chunk_content)
        .sort(),
    ).toEqual(candidates.map((c) => c.chunk_content).sort());
    // And past 50 candidates it is refused before any call
    fake.reset();
    ruled(fake);
    const many = await givenTexts(
      t,
      Array.from({ length: 51 }, (_, i) => `doc ${i}`),
    );
    const refused = await sql(`SELECT id FROM files.${many} ORDER BY LLM_RERANK('best', text)`);
    expect(refused).toMatchObject({ type: 'error', error_code: 1153 });
    expect(refused.error_message).toMatch(
      /LLM_RERANK ranks at most 50 rows for one prompt, and this query has 51/,
    );
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it('every LLM function of one query counts toward one LLM_SQL_MAX_CALLS, refused before the call past it', async () => {
    // An app of its own: its limit is not the other tests'.
    let own = await startTestApp(store, {
      ...FUNCTION_ENV,
      LLM_FUNCTION_BASE_URL: fake.baseUrl,
      LLM_SQL_MAX_CALLS: '5',
    });
    try {
      const file = await givenTexts(
        own,
        Array.from({ length: 40 }, (_, i) => `budget ${i} keep`),
      );
      // 40 rows to filter are 3 requests, then LLM() over the 40 kept rows 3 more: 6 in all.
      const both = `SELECT id, LLM(text) AS said FROM files.${file} WHERE LLM_FILTER('Keep?', text) ORDER BY id`;
      const refused = await querySql(own, both);
      expect(refused).toMatchObject({ type: 'error', error_code: 1153 });
      expect(refused.error_message).toMatch(
        /after 3 made by the query's other LLM functions.*at most 5 \(LLM_SQL_MAX_CALLS\)/,
      );
      expect(fake.chatRequests()).toHaveLength(3);
      own = await own.restart({ LLM_SQL_MAX_CALLS: '6' });
      expect(rowsOf(await querySql(own, both))).toHaveLength(40);
      expect(fake.chatRequests()).toHaveLength(9);
    } finally {
      await own.dispose();
    }
  });

  it('refuses them where they cannot be answered, naming the function', async () => {
    const file = await givenTexts(t, ['x']);
    const cases: [string, RegExp][] = [
      [
        `SELECT LLM_FILTER('p') FROM files.${file}`,
        /LLM_FILTER takes a prompt \(text\) and one or more columns/,
      ],
      [
        `SELECT id FROM files.${file} GROUP BY id HAVING LLM_FILTER('p', id)`,
        /LLM_FILTER is answered in the outer SELECT's WHERE clause and column list only/,
      ],
      [
        `SELECT id FROM files.${file} WHERE LLM_REDUCE('p', text) = 'x'`,
        /LLM_REDUCE is answered in the outer SELECT's column list only/,
      ],
      [
        `SELECT id FROM files.${file} WHERE LLM_RERANK('p', text) = 1`,
        /LLM_RERANK is answered in the outer SELECT's ORDER BY and column list only/,
      ],
      [
        `SELECT LLM_REDUCE('p', LLM(text)) FROM files.${file}`,
        /An LLM function in an argument of LLM_REDUCE/,
      ],
      [
        `SELECT * FROM (SELECT id FROM files.${file} WHERE LLM_FILTER('p', text)) s`,
        /LLM_FILTER is answered in the outer SELECT/,
      ],
    ];
    for (const [query, error] of cases) {
      const answer = await sql(query);
      expect({ query, type: answer.type, code: answer.error_code }).toEqual({
        query,
        type: 'error',
        code: 1210,
      });
      expect(answer.error_message).toMatch(error);
    }
    expect(fake.chatRequests()).toHaveLength(0);
  });
});
