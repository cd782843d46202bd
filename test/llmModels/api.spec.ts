/**
 * LLM models over SQL, MindsDB's way: CREATE ML_ENGINE … FROM openai, CREATE MODEL … PREDICT answer
 * USING engine, prompt_template; then a SELECT or a JOIN asks the model once per distinct prompt,
 * against a local OpenAI-compatible stand-in (a real socket, the real `openai` client). Each answer
 * is an event on the query's own stream, and information_schema shows what it cost.
 */
import { querySql, startTestApp, type TestApp } from '../support/app';
import { fakeReply } from '../support/fakeOpenAi';
import { eventsOf, uniqueName } from '../support/world';
import { closeStandIns, givenLlmModel, givenTexts, promptsSeen, rowsOf, standIn } from './world';

describe('LLM models in SQL', () => {
  let t: TestApp;
  const sql = (query: string) => querySql(t, query);

  beforeAll(async () => {
    t = await startTestApp('sqlite', { LLM_SQL_MAX_CALLS: '6', LLM_SQL_CONCURRENCY: '2' });
  });
  afterAll(async () => {
    await t.dispose();
    await closeStandIns();
  });

  it('is complete at once, listed and described like any model; its version is on the project stream', async () => {
    const w = await givenLlmModel(t);
    const listed = rowsOf(
      await sql(
        `SELECT NAME, ENGINE, STATUS, ACTIVE, VERSION, PREDICT FROM information_schema.MODELS WHERE PROJECT = '${w.project}'`,
      ),
    );
    expect(listed).toEqual([
      { NAME: w.model, ENGINE: w.engine, STATUS: 'complete', ACTIVE: true, VERSION: 1, PREDICT: 'answer' },
    ]);
    const features = rowsOf(await sql(`DESCRIBE ${w.project}.${w.model}.features`));
    expect(features.map((f) => [f.column, f.role])).toEqual([
      ['text', 'feature'],
      ['answer', 'target'],
    ]);
    const types = (await eventsOf(t, `project-${w.project}`)).map((e) => e.type);
    expect(types).toEqual([
      'ProjectCreated',
      'ModelVersionDefined',
      'LlmModelReady',
      'ModelVersionActivated',
    ]);
    // Nothing was called to define it.
    expect(w.fake.chatRequests()).toHaveLength(0);
    // The engine's key is never shown: the model's options hold no key, the engine's are masked.
    const engines = await sql(
      `SELECT CONNECTION_DATA FROM information_schema.ML_ENGINES WHERE NAME = '${w.engine}'`,
    );
    expect(JSON.stringify(engines)).not.toContain(w.key);
  });

  it('answers a WHERE with the template filled in, as sent, with the engine key to the engine URL only', async () => {
    const w = await givenLlmModel(t);
    const answer = await sql(
      `SELECT text, answer FROM ${w.project}.${w.model} WHERE text = 'the "quick" fox {{x}}'`,
    );
    expect(rowsOf(answer)).toEqual([
      { text: 'the "quick" fox {{x}}', answer: 'answer: Summarize: the "quick" fox {{x}}' },
    ]);
    const [request] = w.fake.requests().filter((r) => r.path === '/v1/chat/completions');
    expect(request!.headers.authorization).toBe(`Bearer ${w.key}`);
    expect(request!.body).toMatchObject({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Summarize: the "quick" fox {{x}}' }],
    });
  });

  it('a JOIN asks once per distinct prompt, pairs every row with its answer, and records each call with its tokens', async () => {
    const w = await givenLlmModel(t);
    const file = await givenTexts(t, ['alpha', 'beta', 'alpha', 'gamma', 'beta']);
    const answer = await sql(
      `SELECT t.id, t.text, m.answer FROM files.${file} AS t JOIN ${w.project}.${w.model} AS m ORDER BY t.id`,
    );
    expect(rowsOf(answer)).toEqual(
      ['alpha', 'beta', 'alpha', 'gamma', 'beta'].map((text, i) => ({
        id: i + 1,
        text,
        answer: `answer: Summarize: ${text}`,
      })),
    );
    expect(promptsSeen(w.fake).sort()).toEqual(['Summarize: alpha', 'Summarize: beta', 'Summarize: gamma']);
    const calls = rowsOf(
      await sql(
        `SELECT QUERY_ID, SEQ, MODEL, MODEL_VERSION, SOURCE, PROVIDER, PROVIDER_MODEL, ENGINE, CACHED, OUTCOME, PROMPT_TOKENS,
          COMPLETION_TOKENS, TOTAL_TOKENS, ACTOR, VIA FROM information_schema.LLM_CALLS WHERE PROJECT = '${w.project}' ORDER BY SEQ`,
      ),
    );
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.QUERY_ID)).size).toBe(1);
    for (const [i, c] of calls.entries())
      expect(c).toMatchObject({
        SEQ: i + 1,
        MODEL: w.model,
        MODEL_VERSION: 1,
        SOURCE: 'model',
        PROVIDER: 'openai',
        PROVIDER_MODEL: 'gpt-test',
        ENGINE: w.engine,
        CACHED: false,
        OUTCOME: 'ok',
        // The stand-in counts words: "Summarize: alpha" is 2 (+1 per message), the answer 3.
        PROMPT_TOKENS: 3,
        COMPLETION_TOKENS: 3,
        TOTAL_TOKENS: 6,
        VIA: 'sql',
      });
    const usage = rowsOf(
      await sql(
        `SELECT MODEL, CALLS, CACHED_ANSWERS, ERRORS, TOTAL_TOKENS FROM information_schema.LLM_USAGE WHERE PROJECT = '${w.project}'`,
      ),
    );
    expect(usage).toEqual([{ MODEL: w.model, CALLS: 3, CACHED_ANSWERS: 0, ERRORS: 0, TOTAL_TOKENS: 18 }]);
    // On the query's own stream, not the project's.
    const events = await eventsOf(t, `llm-query-${String(calls[0]!.QUERY_ID)}`);
    expect(events.map((e) => e.type)).toEqual(['LlmCallRecorded', 'LlmCallRecorded', 'LlmCallRecorded']);
    expect(JSON.stringify(events)).not.toContain('alpha');
    expect((await eventsOf(t, `project-${w.project}`)).map((e) => e.type)).not.toContain('LlmCallRecorded');
  });

  it('a JOIN with LIMIT asks only the rows it answers', async () => {
    const w = await givenLlmModel(t);
    const file = await givenTexts(t, ['one', 'two', 'three', 'four', 'five', 'six', 'seven']);
    const answer = await sql(
      `SELECT t.id, m.answer FROM files.${file} AS t JOIN ${w.project}.${w.model} AS m LIMIT 2`,
    );
    expect(rowsOf(answer)).toHaveLength(2);
    expect(w.fake.chatRequests()).toHaveLength(2);
  });

  it('more distinct prompts than LLM_SQL_MAX_CALLS is error 1153 before any call', async () => {
    const w = await givenLlmModel(t);
    const file = await givenTexts(t, ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    const answer = await sql(
      `SELECT t.id, m.answer FROM files.${file} AS t JOIN ${w.project}.${w.model} AS m`,
    );
    expect(answer).toMatchObject({ type: 'error', error_code: 1153 });
    expect(answer.error_message).toMatch(/7 calls.*at most 6 \(LLM_SQL_MAX_CALLS\)/);
    expect(w.fake.chatRequests()).toHaveLength(0);
    // Repeated prompts count once: six distinct of seven rows pass.
    const repeated = await givenTexts(t, ['a', 'b', 'c', 'd', 'e', 'f', 'a']);
    expect(
      rowsOf(
        await sql(`SELECT t.id, m.answer FROM files.${repeated} AS t JOIN ${w.project}.${w.model} AS m`),
      ),
    ).toHaveLength(7);
    expect(w.fake.chatRequests()).toHaveLength(6);
  });

  it('a provider failing then recovering is retried; the call records its retries', async () => {
    const w = await givenLlmModel(t);
    w.fake.enqueue(fakeReply.serverError(503), fakeReply.rateLimited(0));
    const answer = await sql(`SELECT answer FROM ${w.project}.${w.model} WHERE text = 'retry me'`);
    expect(rowsOf(answer)).toEqual([{ answer: 'answer: Summarize: retry me' }]);
    expect(w.fake.chatRequests()).toHaveLength(3);
    const [call] = rowsOf(
      await sql(`SELECT OUTCOME, RETRIES FROM information_schema.LLM_CALLS WHERE PROJECT = '${w.project}'`),
    );
    expect(call).toEqual({ OUTCOME: 'ok', RETRIES: 2 });
  });

  it('a provider that keeps failing fails the query, naming the model; the failed call is recorded', async () => {
    const w = await givenLlmModel(t);
    w.fake.setFallback(fakeReply.error(400, 'context too long'));
    const answer = await sql(`SELECT answer FROM ${w.project}.${w.model} WHERE text = 'x'`);
    expect(answer).toMatchObject({ type: 'error' });
    expect(answer.error_message).toContain(`LLM model ${w.project}.${w.model}`);
    const [call] = rowsOf(
      await sql(
        `SELECT OUTCOME, ERROR_KIND, TOTAL_TOKENS FROM information_schema.LLM_CALLS WHERE PROJECT = '${w.project}'`,
      ),
    );
    expect(call).toEqual({ OUTCOME: 'error', ERROR_KIND: 'bad_request', TOTAL_TOKENS: null });
  });

  it('USING max_tokens and prompt_template reach the call; where calls go cannot be overridden', async () => {
    const w = await givenLlmModel(t);
    const answer = await sql(
      `SELECT answer FROM ${w.project}.${w.model} WHERE text = 'x' USING max_tokens = 7, prompt_template = 'Shout: {{text}}'`,
    );
    expect(rowsOf(answer)).toEqual([{ answer: 'answer: Shout: x' }]);
    expect(w.fake.chatRequests()[0]).toMatchObject({ max_tokens: 7 });
    const moved = await sql(
      `SELECT answer FROM ${w.project}.${w.model} WHERE text = 'x' USING api_base = 'http://127.0.0.1:1/v1'`,
    );
    expect(moved).toMatchObject({ type: 'error' });
    expect(w.fake.chatRequests()).toHaveLength(1);
    const tabular = await sql(
      `SELECT answer FROM ${w.project}.${w.model} WHERE text = 'x' USING fixed_confidence = 0.5`,
    );
    expect(tabular).toMatchObject({ type: 'error' });
    expect(tabular.error_message).toContain('is an LLM model');
  });

  it('json_struct answers one JSON object with exactly its keys, asked in JSON mode', async () => {
    const fake = await standIn();
    fake.setFallback(fakeReply.text('{"name": "Ada", "city": "London", "extra": 1}'));
    const w = await givenLlmModel(t, {
      fake,
      using: 'json_struct = {"name": "the person\'s name", "city": "where they live"}, input_text = \'text\'',
    });
    const answer = await sql(`SELECT answer FROM ${w.project}.${w.model} WHERE text = 'Ada lives in London'`);
    expect(JSON.parse(String(rowsOf(answer)[0]!.answer))).toEqual({ name: 'Ada', city: 'London' });
    const body = fake.chatRequests()[0]!;
    expect(body).toMatchObject({ response_format: { type: 'json_object' } });
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'Ada lives in London' });
    fake.setFallback(fakeReply.text('not json'));
    const bad = await sql(`SELECT answer FROM ${w.project}.${w.model} WHERE text = 'other'`);
    expect(bad).toMatchObject({ type: 'error' });
    expect(bad.error_message).toContain('not a JSON object');
  });

  it('question_column with context_column asks the question with its context', async () => {
    const w = await givenLlmModel(t, { using: "question_column = 'q', context_column = 'c'" });
    const answer = await sql(
      `SELECT q, answer FROM ${w.project}.${w.model} WHERE q = 'Who?' AND c = 'Ada wrote it.'`,
    );
    expect(rowsOf(answer)).toEqual([
      { q: 'Who?', answer: 'answer: Context: Ada wrote it.\nQuestion: Who?\nAnswer:' },
    ]);
  });

  it('bad definitions are SQL errors naming the statement; nothing is recorded', async () => {
    const w = await givenLlmModel(t);
    const bad = (using: string) =>
      sql(
        `CREATE MODEL ${w.project}.${uniqueName('bad')} PREDICT answer USING engine = '${w.engine}', ${using}`,
      );
    for (const using of [
      "model_name = 'x'",
      "prompt_template = 'x', mode = 'poetry'",
      "prompt_template = 'x', max_tokens = -1",
      "prompt_template = 'x', temperature = 9",
      "prompt_template = 'a {{}} b'",
      "mode = 'json_struct', input_text = 't'",
    ]) {
      const answer = await bad(using);
      expect(answer).toMatchObject({ type: 'error' });
      expect(answer.error_message).toMatch(/^CREATE MODEL /);
    }
    const before = (await eventsOf(t, `project-${w.project}`)).length;
    expect(before).toBe(4);
    // An engine that learns from rows still needs FROM.
    const tabular = await sql(`CREATE MODEL ${w.project}.${uniqueName('t')} PREDICT answer`);
    expect(tabular.error_message).toMatch(/needs FROM/);
  });

  it('predictions are written out as any model’s: CREATE TABLE files.f (SELECT … JOIN the model)', async () => {
    const w = await givenLlmModel(t);
    const file = await givenTexts(t, ['red', 'green']);
    const out = uniqueName('summaries');
    const made = await sql(
      `CREATE TABLE files.${out} (SELECT t.id, m.answer FROM files.${file} AS t JOIN ${w.project}.${w.model} AS m)`,
    );
    expect(made.error_message).toBeUndefined();
    expect(rowsOf(await sql(`SELECT id, answer FROM files.${out} ORDER BY id`))).toEqual([
      { id: 1, answer: 'answer: Summarize: red' },
      { id: 2, answer: 'answer: Summarize: green' },
    ]);
  });

  it('RETRAIN … USING prompt_template makes version 2, complete at once, asked with its new prompt', async () => {
    const w = await givenLlmModel(t);
    const retrained = await sql(
      `RETRAIN ${w.project}.${w.model} USING prompt_template = 'Translate: {{text}}'`,
    );
    expect(rowsOf(retrained)[0]).toMatchObject({ VERSION: 2, STATUS: 'complete' });
    expect(rowsOf(await sql(`SELECT answer FROM ${w.project}.${w.model} WHERE text = 'hola'`))).toEqual([
      { answer: 'answer: Translate: hola' },
    ]);
    expect(rowsOf(await sql(`SELECT answer FROM ${w.project}.${w.model}.1 WHERE text = 'hola'`))).toEqual([
      { answer: 'answer: Summarize: hola' },
    ]);
  });
});

describe('conversational modes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(async () => {
    await t.dispose();
    await closeStandIns();
  });

  it('conversational answers the last row after the others; conversational-full answers every row', async () => {
    const fake = await standIn();
    const w = await givenLlmModel(t, { fake, using: "mode = 'conversational', user_column = 'text'" });
    const file = await givenTexts(t, ['hi', 'how are you?']);
    const answer = await querySql(
      t,
      `SELECT t.id, m.answer FROM files.${file} AS t JOIN ${w.project}.${w.model} AS m ORDER BY t.id`,
    );
    expect(rowsOf(answer)).toEqual([
      { id: 1, answer: null },
      { id: 2, answer: 'answer: how are you?' },
    ]);
    expect(fake.chatRequests().map((b) => b.messages)).toEqual([
      [
        { role: 'user', content: 'hi' },
        { role: 'user', content: 'how are you?' },
      ],
    ]);
    const full = await givenLlmModel(t, {
      fake,
      using: "mode = 'conversational-full', user_column = 'text'",
    });
    const both = await querySql(
      t,
      `SELECT t.id, m.answer FROM files.${file} AS t JOIN ${full.project}.${full.model} AS m ORDER BY t.id`,
    );
    expect(rowsOf(both).map((r) => r.answer)).toEqual(['answer: hi', 'answer: how are you?']);
  });
});
