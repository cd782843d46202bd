import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { querySql, startTestApp, type SqlAnswer, type StoreKind, type TestApp } from '../support/app';
import { fakeReply, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { givenProject, uniqueName } from '../support/world';
import { hostileStrings, ident, lit } from '../support/hostile';

/** The answer's rows as objects (column name → value); fails on an error answer. */
export const rowsOf = (a: SqlAnswer) => {
  expect(a.error_message).toBeUndefined();
  return a.data!.map((row) => Object.fromEntries(a.column_names!.map((c, i) => [c, row[i]])));
};

/** The stand-in answers each prompt with `answer: <the prompt>`, so answers can be told apart. */
export const echoing = (fake: FakeOpenAi) =>
  fake.setFallback((body) => fakeReply.text(`answer: ${lastUserText(body)}`));

const started: FakeOpenAi[] = [];
/** A stand-in of the spec's own (closed by `closeStandIns`). */
export const standIn = async (options: Parameters<typeof startFakeOpenAi>[0] = {}) => {
  const fake = echoing(await startFakeOpenAi(options));
  started.push(fake);
  return fake;
};
/** Closes every stand-in this spec file started. */
export const closeStandIns = async () => {
  for (const fake of started.splice(0)) await fake.close();
};

export type LlmWorld = {
  project: string;
  engine: string;
  model: string;
  key: string;
  fake: FakeOpenAi;
};

/**
 * A project with an ML engine made FROM openai (its own key and the stand-in's address) and an LLM
 * model on it: `PREDICT answer`, prompt `Summarize: {{text}}` unless `using` says otherwise.
 */
export const givenLlmModel = async (
  t: TestApp,
  options: { using?: string; fake?: FakeOpenAi; key?: string } = {},
): Promise<LlmWorld> => {
  const key = options.key ?? `sk-engine-${uniqueName('key')}`;
  const fake = options.fake ?? (await standIn({ apiKeys: [key] }));
  const { name: project } = await givenProject(t);
  const engine = uniqueName('openai_engine');
  const model = uniqueName('summarizer');
  const created = await querySql(
    t,
    `CREATE ML_ENGINE ${engine} FROM openai USING openai_api_key = '${key}', api_base = '${fake.baseUrl}'`,
  );
  expect(created).toMatchObject({ type: 'ok' });
  const defined = await querySql(
    t,
    `CREATE MODEL ${project}.${model} PREDICT answer USING engine = '${engine}', model_name = 'gpt-test', ${
      options.using ?? "prompt_template = 'Summarize: {{text}}'"
    }`,
  );
  expect(defined.error_message).toBeUndefined();
  return { project, engine, model, key, fake };
};

/** A CSV file of `texts` (`id,text`), uploaded as a table of `files`. */
export const givenTexts = async (t: TestApp, texts: readonly string[]): Promise<string> => {
  const name = uniqueName('texts');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'llm-texts-'));
  const file = path.join(dir, `${name}.csv`);
  const cell = (s: string) => `"${s.replace(/"/g, '""')}"`;
  fs.writeFileSync(file, ['id,text', ...texts.map((s, i) => `${i + 1},${cell(s)}`)].join('\n') + '\n');
  await t.http.put(`/api/files/${name}`).attach('file', file).expect(200);
  fs.rmSync(dir, { recursive: true, force: true });
  return name;
};

/** The user messages the stand-in received, in arrival order. */
export const promptsSeen = (fake: FakeOpenAi) => fake.chatRequests().map((b) => lastUserText(b));

const hostileString = hostileStrings(['{{q}}', '{{', '}}', '{{ }}', 'q']);

/** A JSON object nested `depth` levels (json_struct is an object: a reader must survive deep ones). */
const deep = (depth: number): string => (depth === 0 ? "'x'" : `{"k": ${deep(depth - 1)}}`);

/**
 * Statements with a generated hostile value in each new input of LLM models and LLM(): CREATE
 * MODEL's options and name, a query's WHERE values and USING overrides, LLM()'s prompt.
 */
export const hostileLlmStatements = (model: string, engine: string) =>
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

/**
 * An ML engine FROM openai on the stand-in at `baseUrl` (holding `key`) and an LLM model
 * `mindsdb.<model>` on it (`PREDICT answer`, prompt `Q: {{q}}`), each made by `sql` (over HTTP, as
 * the admin when sign-in is on).
 */
export const givenQuestionModel = async (
  sql: (query: string) => Promise<{ type: string }>,
  o: { baseUrl: string; engine: string; model: string; key: string },
) => {
  expect(
    await sql(
      `CREATE ML_ENGINE ${o.engine} FROM openai USING openai_api_key = '${o.key}', api_base = '${o.baseUrl}'`,
    ),
  ).toMatchObject({ type: 'ok' });
  expect(
    await sql(
      `CREATE MODEL mindsdb.${o.model} PREDICT answer USING engine = '${o.engine}', model_name = 'm', prompt_template = 'Q: {{q}}'`,
    ),
  ).toMatchObject({ type: 'table' });
};

/**
 * The world the hostile specs send generated statements into: an app whose LLM() asks an echoing
 * stand-in, and a question model (`givenQuestionModel`) on that stand-in.
 */
export const startHostileLlmWorld = async (kind: StoreKind) => {
  const fake = echoing(await startFakeOpenAi());
  const t = await startTestApp(kind, {
    LLM_FUNCTION_BASE_URL: fake.baseUrl,
    LLM_FUNCTION_MODEL_NAME: 'fn-model',
    LLM_CACHE_ENTRIES: '100',
  });
  const world = { t, fake, engine: 'hostile_engine', model: 'hostile_model' };
  await givenQuestionModel(
    async (query) =>
      (await t.http.post('/api/sql/query').send({ query }).expect(200)).body as { type: string },
    { baseUrl: fake.baseUrl, engine: world.engine, model: world.model, key: 'sk-h' },
  );
  return world;
};
