/**
 * Every new input of LLM models, generated hostile (full Unicode with lone surrogates and NUL, huge,
 * deeply nested, empty): CREATE MODEL's options and name, a query's WHERE values and USING
 * overrides, LLM()'s prompt. Each is answered (a table or a SQL error), never a 500 or an internal
 * error; afterwards the service writes, is ready at the log's head, and a rebuild equals live.
 */
import fc from 'fast-check';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { rebuildDifferences } from '../support/promise-rebuild';
import { hostileStrings } from '../support/hostile';
import { echoing } from './world';

const SEED = 20260639;
const RUNS = Number(process.env.HOSTILE_RUNS ?? 40);

const hostileString = hostileStrings(['{{q}}', '{{', '}}', '{{ }}', 'q']);

/** A JSON object nested `depth` levels (json_struct is an object: a reader must survive deep ones). */
const deep = (depth: number): string => (depth === 0 ? "'x'" : `{"k": ${deep(depth - 1)}}`);

const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
const ident = (s: string) => `\`${s.replace(/`/g, '``')}\``;

/** Statements with the generated value in each new input. */
const statements = (model: string, engine: string) =>
  fc.oneof(
    hostileString.map(
      (s) => `CREATE MODEL mindsdb.hm PREDICT answer USING engine = '${engine}', prompt_template = ${lit(s)}`,
    ),
    hostileString.map(
      (s) => `CREATE MODEL mindsdb.hm PREDICT answer USING engine = '${engine}', question_column = ${lit(s)}`,
    ),
    hostileString.map(
      (s) =>
        `CREATE MODEL mindsdb.hm PREDICT ${ident(s)} USING engine = '${engine}', prompt_template = '{{q}}'`,
    ),
    hostileString.map(
      (s) =>
        `CREATE MODEL mindsdb.hm PREDICT answer USING engine = '${engine}', prompt_template = '{{q}}', mode = ${lit(s)}`,
    ),
    hostileString.map(
      (s) =>
        `CREATE MODEL mindsdb.hm PREDICT answer USING engine = '${engine}', prompt_template = '{{q}}', model_name = ${lit(s)}, max_tokens = ${lit(s)}, temperature = ${lit(s)}`,
    ),
    hostileString.map(
      (s) =>
        `CREATE MODEL mindsdb.hm PREDICT answer USING engine = '${engine}', input_text = 'q', json_struct = {${lit(s)}: ${lit(s)}}`,
    ),
    fc
      .integer({ min: 1, max: 200 })
      .map(
        (d) =>
          `CREATE MODEL mindsdb.hm PREDICT answer USING engine = '${engine}', input_text = 'q', json_struct = ${deep(d)}`,
      ),
    hostileString.map(
      (s) =>
        `CREATE MODEL mindsdb.${ident(s)} PREDICT answer USING engine = '${engine}', prompt_template = '{{q}}'`,
    ),
    hostileString.map((s) => `SELECT answer FROM mindsdb.${model} WHERE q = ${lit(s)}`),
    hostileString.map(
      (s) => `SELECT answer FROM mindsdb.${model} WHERE q = 'x' USING prompt_template = ${lit(s)}`,
    ),
    hostileString.map(
      (s) => `SELECT answer FROM mindsdb.${model} WHERE q = 'x' USING max_tokens = ${lit(s)}`,
    ),
    hostileString.map((s) => `SELECT answer FROM mindsdb.${model} WHERE q = 'x' USING prompt = ${lit(s)}`),
    hostileString.map((s) => `SELECT LLM(${lit(s)}) AS a`),
    hostileString.map((s) => `SELECT LLM(${lit(s)} || CAST(range AS VARCHAR)) AS a FROM range(3)`),
  );

const clip = (text: string) => (text.length <= 200 ? text : `${text.slice(0, 100)}…(${text.length})`);

describe.each(storeKinds)('generated values in LLM models and LLM() (%s)', (kind) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  const engine = 'hostile_engine';
  const model = 'hostile_model';
  beforeAll(async () => {
    fake = echoing(await startFakeOpenAi());
    t = await startTestApp(kind, {
      LLM_FUNCTION_BASE_URL: fake.baseUrl,
      LLM_FUNCTION_MODEL_NAME: 'fn-model',
      LLM_CACHE_ENTRIES: '100',
    });
    const sql = async (query: string) =>
      (await t.http.post('/api/sql/query').send({ query }).expect(200)).body as { type: string };
    expect(
      await sql(
        `CREATE ML_ENGINE ${engine} FROM openai USING openai_api_key = 'sk-h', api_base = '${fake.baseUrl}'`,
      ),
    ).toMatchObject({ type: 'ok' });
    expect(
      await sql(
        `CREATE MODEL mindsdb.${model} PREDICT answer USING engine = '${engine}', model_name = 'm', prompt_template = 'Q: {{q}}'`,
      ),
    ).toMatchObject({ type: 'table' });
  }, 60_000);
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });

  it('answers every one (a table or a SQL error), and the service goes on', async () => {
    const violations = new Set<string>();
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(statements(model, engine), async (query) => {
        const res = await t.http.post('/api/sql/query').send({ query });
        if (res.status !== 200 || res.body?.error_code === 1105)
          violations.add(`SQL ${clip(query)} → ${res.status} ${clip(res.text)}`);
        if (res.body?.type === 'table') answered++;
        await t.http.post('/api/sql/query').send({ query: 'DROP MODEL IF EXISTS mindsdb.hm' });
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect([...violations]).toEqual([]);
    expect(answered).toBeGreaterThan(0);

    const after = await t.http
      .post('/api/sql/query')
      .send({ query: `SELECT answer FROM mindsdb.${model} WHERE q = 'after'` })
      .expect(200);
    expect(after.body.data).toEqual([['answer: Q: after']]);
    const ready = (await t.http.get('/api/ready').expect(200)).body as { position: string; log_head: string };
    expect(ready.position).toBe(ready.log_head);
    const status = (await t.http.get('/api/status').expect(200)).body as { read_model: { failed: unknown } };
    expect(status.read_model.failed).toBeNull();
    expect(await rebuildDifferences(t, 7)).toEqual([]);
  }, 600_000);
});
