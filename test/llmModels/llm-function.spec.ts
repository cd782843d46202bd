/**
 * MindsDB's LLM() function: `SELECT LLM('…' || col) FROM t` asks the default model (LLM_FUNCTION_*)
 * once per distinct prompt, and each answer is recorded like an LLM model's.
 */
import { querySql, startTestApp, type TestApp } from '../support/app';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { eventsOf } from '../support/world';
import { echoing, givenTexts, promptsSeen, rowsOf } from './world';

describe('LLM()', () => {
  let t: TestApp;
  let fake: FakeOpenAi;
  const key = 'sk-function-key-0001';
  const sql = (query: string) => querySql(t, query);

  beforeAll(async () => {
    fake = echoing(await startFakeOpenAi({ apiKeys: [key] }));
    t = await startTestApp('sqlite', {
      LLM_FUNCTION_BASE_URL: fake.baseUrl,
      LLM_FUNCTION_MODEL_NAME: 'fn-model',
      LLM_FUNCTION_API_KEY: key,
      LLM_FUNCTION_MAX_TOKENS: '50',
      LLM_SQL_MAX_CALLS: '5',
    });
  });
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });
  beforeEach(() => {
    echoing(fake);
    fake.reset();
    echoing(fake);
  });

  it('answers each row, asking each distinct prompt once, with the configured model and key', async () => {
    const file = await givenTexts(t, ['red', 'blue', 'red']);
    const callsOfFunction = async () =>
      rowsOf(
        await sql(
          `SELECT QUERY_ID, SOURCE, MODEL, PROVIDER_MODEL, PROJECT FROM information_schema.LLM_CALLS WHERE SOURCE = 'function' AND PROVIDER_MODEL = 'fn-model'`,
        ),
      );
    // The app is shared by this file's tests: only this query's calls count.
    const earlier = new Set((await callsOfFunction()).map((c) => c.QUERY_ID));
    const answer = await sql(
      `SELECT id, LLM(CONCAT('Colour: ', text)) AS said FROM files.${file} ORDER BY id`,
    );
    expect(rowsOf(answer)).toEqual([
      { id: 1, said: 'answer: Colour: red' },
      { id: 2, said: 'answer: Colour: blue' },
      { id: 3, said: 'answer: Colour: red' },
    ]);
    expect(promptsSeen(fake).sort()).toEqual(['Colour: blue', 'Colour: red']);
    const requests = fake.requests().filter((r) => r.path === '/v1/chat/completions');
    for (const r of requests) expect(r.headers.authorization).toBe(`Bearer ${key}`);
    expect(fake.chatRequests()[0]).toMatchObject({ model: 'fn-model', max_tokens: 50 });
    const calls = (await callsOfFunction()).filter((c) => !earlier.has(c.QUERY_ID));
    expect(calls).toHaveLength(2);
    expect(calls[1]!.QUERY_ID).toBe(calls[0]!.QUERY_ID);
    expect(calls[0]).toMatchObject({ SOURCE: 'function', MODEL: null, PROJECT: 'mindsdb' });
    const events = await eventsOf(t, `llm-query-${String(calls[0]!.QUERY_ID)}`);
    expect(events.map((e) => e.type)).toEqual(['LlmCallRecorded', 'LlmCallRecorded']);
  });

  it('a constant prompt, a LIMIT, a GROUP BY: the prompts asked are the rows answered', async () => {
    expect(rowsOf(await sql(`SELECT LLM('hello')`))).toEqual([{ "LLM('hello')": 'answer: hello' }]);
    const file = await givenTexts(t, ['a', 'b', 'c', 'd']);
    expect(rowsOf(await sql(`SELECT LLM('' || text) AS x FROM files.${file} ORDER BY id LIMIT 2`))).toEqual([
      { x: 'answer: a' },
      { x: 'answer: b' },
    ]);
    const grouped = await sql(
      `SELECT id % 2 AS g, LLM(string_agg(text, ',' ORDER BY text)) AS x FROM files.${file} GROUP BY id % 2 ORDER BY g`,
    );
    expect(rowsOf(grouped)).toEqual([
      { g: 0, x: 'answer: b,d' },
      { g: 1, x: 'answer: a,c' },
    ]);
    expect(promptsSeen(fake).sort()).toEqual(['a', 'a,c', 'b', 'b,d', 'hello']);
  });

  it('NULL prompts ask nothing; past LLM_SQL_MAX_CALLS is error 1153 before any call', async () => {
    expect(rowsOf(await sql(`SELECT LLM(NULL) AS x`))).toEqual([{ x: null }]);
    const file = await givenTexts(t, ['1', '2', '3', '4', '5', '6']);
    const answer = await sql(`SELECT LLM(text) FROM files.${file}`);
    expect(answer).toMatchObject({ type: 'error', error_code: 1153 });
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it('LLM() outside the column list, nested, or with two arguments is refused, naming why', async () => {
    const file = await givenTexts(t, ['x']);
    for (const query of [
      `SELECT id FROM files.${file} WHERE LLM(text) = 'yes'`,
      `SELECT LLM(LLM(text)) FROM files.${file}`,
      `SELECT LLM(text, text) FROM files.${file}`,
    ]) {
      const answer = await sql(query);
      expect(answer).toMatchObject({ type: 'error' });
      expect(answer.error_message).toMatch(/LLM\(\)/);
    }
    expect(fake.chatRequests()).toHaveLength(0);
  });
});

describe('LLM() without a model configured', () => {
  it('is an error naming the settings to make', async () => {
    const t = await startTestApp('sqlite');
    try {
      const answer = await querySql(t, `SELECT LLM('hi')`);
      expect(answer).toMatchObject({ type: 'error' });
      expect(answer.error_message).toMatch(/LLM_FUNCTION_MODEL_NAME/);
    } finally {
      await t.dispose();
    }
  });
});
