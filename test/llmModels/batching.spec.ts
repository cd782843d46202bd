/**
 * Many rows per provider request (src/llmCalls/batching.ts): a JOIN or LLM() over more distinct
 * prompts than one batch holds sends them in batches keyed by row; a row the provider drops,
 * garbles or names twice is asked again alone, never given a neighbour's answer; identical prompts
 * are asked once; batched answers equal the row-by-row ones; LLM_SQL_MAX_CALLS counts requests.
 */
import fc from 'fast-check';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { batchRowsOf, fakeReply, lastUserText, type FakeOpenAi } from '../support/fakeOpenAi';
import { closeStandIns, givenLlmModel, givenTexts, rowsOf, standIn, type LlmWorld } from './world';

const SEED = 61_2026;

describe('batched LLM calls', () => {
  let t: TestApp;
  let w: LlmWorld;
  let fake: FakeOpenAi;
  const sql = (query: string) => querySql(t, query);
  const join = (file: string, tail = 'ORDER BY t.id') =>
    sql(`SELECT t.id, t.text, m.answer FROM files.${file} AS t JOIN ${w.project}.${w.model} AS m ${tail}`);
  const batches = () => fake.chatRequests().filter((b) => batchRowsOf(b) !== undefined);
  const singles = () => fake.chatRequests().filter((b) => batchRowsOf(b) === undefined);

  beforeAll(async () => {
    fake = await standIn({ apiKeys: ['sk-batch'] });
    t = await startTestApp('sqlite', {
      LLM_SQL_MAX_CALLS: '16',
      LLM_SQL_CONCURRENCY: '3',
      LLM_FUNCTION_BASE_URL: fake.baseUrl,
      LLM_FUNCTION_MODEL_NAME: 'fn-model',
      LLM_FUNCTION_API_KEY: 'sk-batch',
    });
    w = await givenLlmModel(t, { fake, key: 'sk-batch' });
  });
  afterAll(async () => {
    await t.dispose();
    await closeStandIns();
  });
  beforeEach(() => {
    fake.reset();
    fake.setFallback((body) => ({ type: 'text', content: `answer: ${lastUserText(body)}` }));
  });

  it('sends many rows per request, each row its own answer, each request recorded with its tokens', async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `row ${i + 1}`);
    const file = await givenTexts(t, texts);
    // The specs share one app and run in any order: this query's records are the ones new after it.
    const queriesSoFar = async () =>
      new Set(
        rowsOf(
          await sql(
            `SELECT DISTINCT QUERY_ID FROM information_schema.LLM_CALLS WHERE PROJECT = '${w.project}'`,
          ),
        ).map((r) => String(r.QUERY_ID)),
      );
    const before = await queriesSoFar();
    const answer = rowsOf(await join(file));
    expect(answer.map((r) => r.answer)).toEqual(texts.map((x) => `answer: Summarize: ${x}`));
    // 40 rows: batches of at most 16 (16, 16, 8), nothing asked alone.
    expect(batches().map((b) => batchRowsOf(b)!.length)).toEqual([16, 16, 8]);
    expect(singles()).toHaveLength(0);
    const calls = rowsOf(
      await sql(
        `SELECT QUERY_ID, count(*) AS n, sum(TOTAL_TOKENS) AS tokens FROM information_schema.LLM_CALLS WHERE PROJECT = '${w.project}' AND NOT CACHED GROUP BY QUERY_ID`,
      ),
    ).filter((r) => !before.has(String(r.QUERY_ID)));
    expect(calls).toHaveLength(1);
    expect(Number(calls[0]!.n)).toBe(3);
    expect(Number(calls[0]!.tokens)).toBeGreaterThan(0);
    // Each record names the rows its request carried.
    const carried = rowsOf(
      await sql(
        `SELECT ROWS FROM information_schema.LLM_CALLS WHERE QUERY_ID = '${String(calls[0]!.QUERY_ID)}'`,
      ),
    ).map((r) => JSON.parse(String(r.ROWS)) as number[]);
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect(carried.sort((x, y) => x[0]! - y[0]!)).toEqual([range(1, 16), range(17, 32), range(33, 40)]);
  });

  it('a row dropped, garbled or named twice is asked again alone; no answer moves to a neighbour', async () => {
    const texts = Array.from({ length: 20 }, (_, i) => `item ${String(i + 1).padStart(2, '0')}`);
    const file = await givenTexts(t, texts);
    fake.batchFault('item 03', 'drop').batchFault('item 07', 'garble').batchFault('item 12', 'duplicate');
    const answer = rowsOf(await join(file));
    expect(answer.map((r) => [r.text, r.answer])).toEqual(texts.map((x) => [x, `answer: Summarize: ${x}`]));
    // item 12 named twice (its own answer and its neighbour's): neither entry is trusted, so it is
    // asked again alone; item 13, named once with its own answer, is not.
    expect(singles().map(lastUserText).sort()).toEqual([
      'Summarize: item 03',
      'Summarize: item 07',
      'Summarize: item 12',
    ]);
  });

  it('asks identical prompts once, in batches of the distinct ones', async () => {
    const texts = Array.from({ length: 60 }, (_, i) => `again ${i % 20}`);
    const file = await givenTexts(t, texts);
    const answer = rowsOf(await join(file));
    expect(answer.map((r) => r.answer)).toEqual(texts.map((x) => `answer: Summarize: ${x}`));
    const asked = batches().flatMap((b) => batchRowsOf(b)!.map((r) => r.request));
    expect(asked).toHaveLength(20);
    expect(new Set(asked).size).toBe(20);
  });

  it('a provider that ignores the batch format: its rows are asked alone, and so is the rest of the query', async () => {
    fake.answerBatchesWith({ type: 'text', content: 'I cannot do JSON' });
    const texts = Array.from({ length: 34 }, (_, i) => `plain ${i + 1}`);
    const file = await givenTexts(t, texts);
    const answer = rowsOf(await join(file));
    expect(answer.map((r) => r.answer)).toEqual(texts.map((x) => `answer: Summarize: ${x}`));
    expect(singles()).toHaveLength(34);
    // At most one batch per worker was sent before batching stopped.
    expect(batches().length).toBeLessThanOrEqual(3);
  });

  it('a provider that refuses the batch request (HTTP 400): its rows are asked alone, and the query answers', async () => {
    fake.answerBatchesWith(fakeReply.error(400, "response_format 'json_schema' is not supported"));
    const texts = Array.from({ length: 20 }, (_, i) => `refused ${i + 1}`);
    const file = await givenTexts(t, texts);
    const answer = rowsOf(await join(file));
    expect(answer.map((r) => r.answer)).toEqual(texts.map((x) => `answer: Summarize: ${x}`));
    expect(singles()).toHaveLength(20);
    const outcomes = rowsOf(
      await sql(
        `SELECT OUTCOME, ERROR_KIND, count(*) AS n FROM information_schema.LLM_CALLS WHERE PROJECT = '${w.project}' AND QUERY_ID = (SELECT QUERY_ID FROM information_schema.LLM_CALLS WHERE PROJECT = '${w.project}' ORDER BY CALLED_AT DESC LIMIT 1) GROUP BY ALL ORDER BY OUTCOME`,
      ),
    );
    expect(outcomes.map((o) => [o.OUTCOME, o.ERROR_KIND])).toEqual([
      ['error', 'bad_request'],
      ['ok', null],
    ]);
  });

  it('LLM_SQL_MAX_CALLS counts provider requests: 250 rows are 16 requests; 260 would be 17, refused before any', async () => {
    const ok = await givenTexts(
      t,
      Array.from({ length: 250 }, (_, i) => `cap ${i}`),
    );
    expect(rowsOf(await join(ok))).toHaveLength(250);
    expect(fake.chatRequests()).toHaveLength(16);
    fake.reset();
    const tooMany = await givenTexts(
      t,
      Array.from({ length: 260 }, (_, i) => `over ${i}`),
    );
    const refused = await join(tooMany);
    expect(refused).toMatchObject({ type: 'error', error_code: 1153 });
    expect(refused.error_message).toMatch(/17 calls.*at most 16 \(LLM_SQL_MAX_CALLS\)/);
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it('LLM() batches its prompts too', async () => {
    const texts = Array.from({ length: 30 }, (_, i) => `fn ${i}`);
    const file = await givenTexts(t, texts);
    const answer = rowsOf(
      await sql(`SELECT id, LLM(CONCAT('Say: ', text)) AS said FROM files.${file} ORDER BY id`),
    );
    expect(answer.map((r) => r.said)).toEqual(texts.map((x) => `answer: Say: ${x}`));
    expect(batches().map((b) => batchRowsOf(b)!.length)).toEqual([16, 14]);
  });

  it('batched answers equal row-by-row answers over generated rows', async () => {
    console.log(`batching property: fast-check seed ${SEED}`);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.string({ maxLength: 30 }),
            fc.constantFrom('same', 'same', '"quoted"', '{"row": 1}', 'row 2', '', '😀 ü'),
          ),
          { minLength: 17, maxLength: 48 },
        ),
        async (generated) => {
          const texts = generated.map((x) => `p${++run}:${x.replace(/[\r\n]/g, ' ')}`);
          const file = await givenTexts(t, texts);
          fake.reset();
          fake.setFallback((body) => ({ type: 'text', content: `answer: ${lastUserText(body)}` }));
          const batched = rowsOf(await join(file)).map((r) => [r.id, r.answer]);
          expect(batches().length).toBeGreaterThan(0);
          // The same rows 16 at a time: each query has fewer prompts than a batch, so asked one by one.
          fake.reset();
          fake.setFallback((body) => ({ type: 'text', content: `answer: ${lastUserText(body)}` }));
          const oneByOne: unknown[][] = [];
          for (let from = 1; from <= texts.length; from += 16)
            oneByOne.push(
              ...rowsOf(await join(file, `WHERE t.id BETWEEN ${from} AND ${from + 15} ORDER BY t.id`)).map(
                (r) => [r.id, r.answer],
              ),
            );
          expect(batches()).toHaveLength(0);
          expect(batched).toEqual(oneByOne);
        },
      ),
      { seed: SEED, numRuns: 6 },
    );
  });
});
