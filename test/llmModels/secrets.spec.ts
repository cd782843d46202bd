/**
 * Keys go only where they were stored for: an engine's key to its own api_base, the server's
 * OPENAI_API_KEY to OPENAI_BASE_URL; a model (or a query) naming another address gets no key. Local
 * listeners record every request's Authorization header.
 */
import { querySql, startTestApp, type TestApp } from '../support/app';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { givenProject, uniqueName } from '../support/world';
import { echoing, rowsOf } from './world';

const keysSent = (fake: FakeOpenAi) =>
  fake
    .requests()
    .filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.headers.authorization);

describe('LLM models: where keys go', () => {
  let t: TestApp;
  let a: FakeOpenAi;
  let b: FakeOpenAi;
  let server: FakeOpenAi;
  const keyA = 'sk-engine-a-secret-0001';
  const keyB = 'sk-engine-b-secret-0002';
  const serverKey = 'sk-server-own-secret-0003';
  let project: string;
  const sql = (query: string) => querySql(t, query);

  beforeAll(async () => {
    a = echoing(await startFakeOpenAi());
    b = echoing(await startFakeOpenAi());
    server = echoing(await startFakeOpenAi());
    t = await startTestApp('sqlite', {
      OPENAI_BASE_URL: server.baseUrl,
      OPENAI_API_KEY: serverKey,
      LLM_DEFAULT_MODEL: 'server-model',
    });
    ({ name: project } = await givenProject(t));
    // An engine with no key and no address: the server's OPENAI_BASE_URL and OPENAI_API_KEY.
    expect(await sql(`CREATE ML_ENGINE server_openai FROM openai`)).toMatchObject({ type: 'ok' });
    for (const [name, key, fake] of [
      ['engine_a', keyA, a],
      ['engine_b', keyB, b],
    ] as const)
      expect(
        await sql(
          `CREATE ML_ENGINE ${name} FROM openai USING openai_api_key = '${key}', api_base = '${fake.baseUrl}'`,
        ),
      ).toMatchObject({ type: 'ok' });
  });
  afterAll(async () => {
    await t.dispose();
    for (const f of [a, b, server]) await f.close();
  });
  beforeEach(() => {
    for (const f of [a, b, server]) {
      f.reset();
      echoing(f);
    }
  });

  const model = async (using: string) => {
    const name = uniqueName('m');
    const made = await sql(
      `CREATE MODEL ${project}.${name} PREDICT answer USING ${using}, prompt_template = 'Q: {{q}}'`,
    );
    expect(made.error_message).toBeUndefined();
    return name;
  };
  const ask = (name: string, using = '') =>
    sql(`SELECT answer FROM ${project}.${name} WHERE q = 'x' ${using}`);

  it("an engine's key goes to its own address, and nowhere else", async () => {
    const m = await model("engine = 'engine_a', model_name = 'gpt-a'");
    expect(rowsOf(await ask(m))).toEqual([{ answer: 'answer: Q: x' }]);
    expect(keysSent(a)).toEqual([`Bearer ${keyA}`]);
    expect([...keysSent(b), ...keysSent(server)]).toEqual([]);
  });

  it("a model on engine A that names engine B's address sends no key of A's (nor B's)", async () => {
    const m = await model(`engine = 'engine_a', model_name = 'gpt-a', api_base = '${b.baseUrl}'`);
    await ask(m);
    // One request, carrying no credential at all (a keyless provider's way: issue 61).
    expect(keysSent(b)).toEqual([undefined]);
    expect(keysSent(a)).toEqual([]);
  });

  it("the server's own key goes to OPENAI_BASE_URL only, never to an address a model names", async () => {
    const own = await model("engine = 'server_openai'");
    expect(rowsOf(await ask(own))).toEqual([{ answer: 'answer: Q: x' }]);
    expect(keysSent(server)).toEqual([`Bearer ${serverKey}`]);
    const elsewhere = await model(`engine = 'server_openai', api_base = '${b.baseUrl}'`);
    await ask(elsewhere);
    expect(keysSent(b)).toEqual([undefined]);
    expect(keysSent(server)).toHaveLength(1);
  });

  it("a query cannot move a model's calls (USING api_base / api_key / engine are refused before any call)", async () => {
    const m = await model("engine = 'engine_a', model_name = 'gpt-a'");
    for (const using of [
      `USING api_base = '${b.baseUrl}'`,
      `USING base_url = '${b.baseUrl}'`,
      `USING engine = 'engine_b'`,
      `USING api_key = 'sk-x'`,
    ]) {
      const answer = await ask(m, using);
      expect(answer).toMatchObject({ type: 'error' });
    }
    expect([...keysSent(a), ...keysSent(b), ...keysSent(server)]).toEqual([]);
  });

  it('no answer, catalog or event shows a key: model options are masked, calls hold none', async () => {
    const m = await model(`engine = 'engine_a', model_name = 'gpt-a', api_key = 'sk-model-own-secret-0004'`);
    await ask(m);
    const everything = JSON.stringify([
      await sql(`SELECT * FROM information_schema.MODELS WHERE PROJECT = '${project}'`),
      await sql(`SELECT * FROM information_schema.ML_ENGINES`),
      await sql(`SELECT * FROM information_schema.LLM_CALLS`),
      await sql(`DESCRIBE ${project}.${m}`),
      (await t.http.get(`/api/projects/${project}/models/${m}`)).body,
      (await t.http.get('/api/events?limit=1000')).body,
    ]);
    for (const secret of [keyA, keyB, serverKey, 'sk-model-own-secret-0004'])
      expect(everything).not.toContain(secret);
    // The model's own key went with its own calls (to its engine's address, which it did not change).
    expect(keysSent(a)).toEqual(['Bearer sk-model-own-secret-0004']);
  });
});
