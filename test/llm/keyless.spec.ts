/**
 * A local OpenAI-compatible server without a key (Ollama's, vLLM's, LM Studio's): an agent, a
 * knowledge base's embeddings, an LLM model and LLM() all reach it with no credential at all, not
 * a dummy one (mindsdb#11851, #11910). The stand-in refuses any request carrying `Authorization`
 * (or `api-key`), and the server's own OPENAI_API_KEY is set, bound to another address.
 */
import { querySql, startTestApp, type TestApp } from '../support/app';
import { fakeReply, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { givenProject, uniqueName } from '../support/world';

describe('a keyless local provider', () => {
  let t: TestApp;
  let local: FakeOpenAi;
  const sql = (query: string) => querySql(t, query);
  const credentialsSent = () =>
    local
      .requests()
      .filter((r) => r.headers.authorization !== undefined || r.headers['api-key'] !== undefined);

  beforeAll(async () => {
    local = await startFakeOpenAi({ rejectCredentials: true });
    t = await startTestApp('sqlite', {
      OPENAI_API_KEY: 'sk-server-key-elsewhere',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      LLM_FUNCTION_BASE_URL: local.baseUrl,
      LLM_FUNCTION_MODEL_NAME: 'llama3',
    });
  });
  afterAll(async () => {
    await t.dispose();
    await local.close();
  });
  beforeEach(() => {
    local.reset();
    local.setFallback((body) => fakeReply.text(`local: ${lastUserText(body)}`));
  });
  afterEach(() => {
    expect(credentialsSent()).toEqual([]);
  });

  it('the stand-in refuses a request that carries a key', async () => {
    const res = await fetch(`${local.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer EMPTY' },
      body: JSON.stringify({ model: 'llama3', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(401);
    local.reset();
  });

  it.each(['ollama', 'vllm', 'lmstudio', 'openai_compatible'])(
    'an agent on provider %s with a base_url and no key answers',
    async (provider) => {
      const { name: project } = await givenProject(t);
      const agent = uniqueName('local_agent');
      await t.http
        .post(`/api/projects/${project}/agents`)
        .send({ agent: { name: agent, model: { provider, model_name: 'llama3', base_url: local.baseUrl } } })
        .expect(201);
      const res = await t.http
        .post(`/api/projects/${project}/agents/${agent}/completions`)
        .send({ messages: [{ question: 'hello local', answer: null }] });
      expect(res.status).toBe(200);
      expect(res.body.message.content).toBe('local: hello local');
      expect(local.chatRequests()).toHaveLength(1);
    },
  );

  it('a knowledge base embeds its documents with no key', async () => {
    const { name: project } = await givenProject(t);
    const kb = uniqueName('local_kb');
    const base = `/api/projects/${project}/knowledge_bases`;
    await t.http
      .post(base)
      .send({
        knowledge_base: {
          name: kb,
          embedding_model: { provider: 'ollama', model_name: 'nomic-embed-text', base_url: local.baseUrl },
        },
      })
      .expect(201);
    await t.http
      .put(`${base}/${kb}`)
      .send({ knowledge_base: { rows: [{ id: 'd1', content: 'local embeddings work' }] } })
      .expect(200);
    expect(local.requests().filter((r) => r.path === '/v1/embeddings')).toHaveLength(1);
    const found = await sql(`SELECT id FROM ${project}.${kb} WHERE content = 'local embeddings' LIMIT 1`);
    expect(found.error_message).toBeUndefined();
    expect(found.data?.[0]?.[0]).toBe('d1');
  });

  it('an LLM model on an engine made FROM ollama with no key answers', async () => {
    const { name: project } = await givenProject(t);
    const engine = uniqueName('local_engine');
    const model = uniqueName('local_model');
    expect(
      await sql(`CREATE ML_ENGINE ${engine} FROM ollama USING base_url = '${local.baseUrl}'`),
    ).toMatchObject({
      type: 'ok',
    });
    const defined = await sql(
      `CREATE MODEL ${project}.${model} PREDICT answer USING engine = '${engine}', model_name = 'llama3', prompt_template = 'Say {{text}}'`,
    );
    expect(defined.error_message).toBeUndefined();
    const answer = await sql(`SELECT answer FROM ${project}.${model} WHERE text = 'hi'`);
    expect(answer.error_message).toBeUndefined();
    expect(answer.data).toEqual([['local: Say hi']]);
  });

  it('LLM() on LLM_FUNCTION_BASE_URL with no LLM_FUNCTION_API_KEY answers', async () => {
    const answer = await sql(`SELECT LLM('Say hi') AS said`);
    expect(answer.error_message).toBeUndefined();
    expect(answer.data).toEqual([['local: Say hi']]);
  });
});
