/**
 * EVALUATE KNOWLEDGE_BASE … generate_data: a language model writes the questions (one per sampled
 * chunk), kept in the evaluation's event; and the secrets around it: the `llm`'s key goes only to
 * its base_url, the server's OPENAI_API_KEY only to OPENAI_BASE_URL, the knowledge base's embedding
 * key only to its embedding provider. Each provider here is a local listener that records every
 * request (headers and bodies), so a secret that reached the wrong one is seen.
 */
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { eventsOf, givenEvaluationWorld, kbIdOf, ok, rowsOf, unique } from './support-eval';

const SERVER_KEY = 'sk-server-secret-evaluate-0001';

/** A model that writes, for a record, a question made of its code word (what identifies it). */
const questionWriter = (f: FakeOpenAi) =>
  f.setFallback((body) => {
    const code = /Record (\w+)\./.exec(lastUserText(body))?.[1] ?? 'nothing';
    return fakeReply.text(`\`\`\`json\n{"query": "${code} record", "reference_answer": "${code}"}\n\`\`\``);
  });

describe.each(storeKinds)('EVALUATE KNOWLEDGE_BASE generate_data (%s)', (store) => {
  let t: TestApp;
  let server: FakeOpenAi;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    server = await startFakeOpenAi();
    t = await startTestApp(store, {
      OPENAI_API_KEY: SERVER_KEY,
      OPENAI_BASE_URL: server.baseUrl,
      LLM_DEFAULT_MODEL: 'gpt-server',
    });
  });
  afterAll(async () => {
    await Promise.all([server, ...fakes].map((f) => f.close()));
    await t.dispose();
  });
  const fake = async () => {
    const f = await startFakeOpenAi();
    fakes.push(f);
    return f;
  };

  it('has the llm write the questions, keeps them in the event, and sends its key to its base_url only', async () => {
    const w = await givenEvaluationWorld(t);
    const writer = questionWriter(await fake());
    const key = `sk-eval-${unique('key')}`;
    // The server's provider is shared by this file's tests: only what reaches it from now counts.
    const serverBefore = server.requests().length;
    const answer = rowsOf(
      await ok(
        t,
        `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING test_table = files.${w.questions}, generate_data = {'count': 6}, llm = {'provider': 'openai', 'model_name': 'gpt-writer', 'api_key': '${key}', 'base_url': '${writer.baseUrl}'}`,
      ),
    )[0]!;
    expect(answer).toMatchObject({ total: 6, questions: 6, hit_rate: 1 });
    const chats = writer.requests().filter((r) => r.path === '/v1/chat/completions');
    expect(chats).toHaveLength(6);
    expect(chats.every((r) => r.headers.authorization === `Bearer ${key}`)).toBe(true);
    expect(writer.chatRequests().every((b) => b.model === 'gpt-writer')).toBe(true);
    expect(JSON.stringify(server.requests())).not.toContain(key);
    expect(server.requests().slice(serverBefore)).toHaveLength(0);

    const kbId = await kbIdOf(t, w.project, w.kb);
    const [event] = (await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated');
    const generated = (
      event!.data.testSet as {
        generated: { cases: { docId: string; question: string; answer: string }[]; llm: unknown };
      }
    ).generated;
    expect(generated.cases).toHaveLength(6);
    expect(generated.llm).toEqual({ provider: 'openai', model: 'gpt-writer', baseUrl: writer.baseUrl });
    // As MindsDB does, the generated set replaced test_table's rows: question, answer, doc_id.
    expect(event!.data.testTable).toBe(`files.${w.questions}`);
    const written = rowsOf(await ok(t, `SELECT question, answer, doc_id FROM files.${w.questions}`));
    expect(written).toEqual(
      generated.cases.map((c) => ({
        question: c.question,
        answer: c.answer,
        doc_id: c.docId,
      })),
    );
    expect(JSON.stringify(event)).not.toContain(key);
  });

  it('evaluate = false answers the generated questions and records them without scores', async () => {
    const w = await givenEvaluationWorld(t);
    const writer = questionWriter(await fake());
    const answer = await ok(
      t,
      `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING generate_data = {'count': 3}, evaluate = false, llm = {'provider': 'openai', 'model_name': 'm', 'api_key': 'sk-x', 'base_url': '${writer.baseUrl}'}`,
    );
    expect(answer.column_names).toEqual(['question', 'doc_id', 'answer']);
    expect(answer.data).toHaveLength(3);
    const kbId = await kbIdOf(t, w.project, w.kb);
    const [event] = (await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated');
    expect(event!.data.scores).toBeNull();
  });

  it('gives the server’s OPENAI_API_KEY to no base_url but OPENAI_BASE_URL', async () => {
    const w = await givenEvaluationWorld(t);
    const elsewhere = questionWriter(await fake());
    await ok(
      t,
      `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING generate_data = {'count': 2}, llm = {'provider': 'openai', 'model_name': 'm', 'base_url': '${elsewhere.baseUrl}'}`,
    );
    expect(elsewhere.requests().length).toBeGreaterThan(0);
    expect(JSON.stringify(elsewhere.requests())).not.toContain(SERVER_KEY);
    // Without a base_url the server's own endpoint is used, with the server's key.
    questionWriter(server);
    const serverBefore = server.requests().length;
    await ok(t, `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING generate_data = {'count': 2}`);
    const served = server
      .requests()
      .slice(serverBefore)
      .filter((r) => r.path === '/v1/chat/completions');
    expect(served).toHaveLength(2);
    expect(served.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${SERVER_KEY}`,
      `Bearer ${SERVER_KEY}`,
    ]);
  });

  it('embeds the questions with the knowledge base’s own provider and key, which no other listener sees', async () => {
    const embedder = await fake();
    const writer = questionWriter(await fake());
    const embeddingKey = `sk-embed-${unique('key')}`;
    const project = unique('p');
    const kb = unique('kb');
    await ok(t, `CREATE PROJECT ${project}`);
    await ok(
      t,
      `CREATE KNOWLEDGE_BASE ${project}.${kb} USING embedding_model = {"provider": "openai", "model_name": "emb", "api_key": "${embeddingKey}", "base_url": "${embedder.baseUrl}"}, content_columns = ['content'], id_column = 'id'`,
    );
    await ok(
      t,
      `INSERT INTO ${project}.${kb} (id, content) VALUES ('a', 'Record alphax. one two.'), ('b', 'Record betay. three four.')`,
    );
    await ok(
      t,
      `EVALUATE KNOWLEDGE_BASE ${project}.${kb} USING generate_data = {'count': 2}, llm = {'provider': 'openai', 'model_name': 'm', 'api_key': 'sk-writer', 'base_url': '${writer.baseUrl}'}`,
    );
    const embeddings = embedder.requests().filter((r) => r.path === '/v1/embeddings');
    expect(embeddings.length).toBeGreaterThanOrEqual(2);
    expect(embeddings.every((r) => r.headers.authorization === `Bearer ${embeddingKey}`)).toBe(true);
    expect(JSON.stringify(writer.requests())).not.toContain(embeddingKey);
    expect(JSON.stringify(server.requests())).not.toContain(embeddingKey);
    expect(JSON.stringify(embedder.requests())).not.toContain('sk-writer');
    expect(JSON.stringify(embedder.requests())).not.toContain(SERVER_KEY);
  });

  it('a model that writes no question fails the evaluation (502 over REST) and records nothing', async () => {
    const w = await givenEvaluationWorld(t);
    const babbler = (await fake()).setFallback(fakeReply.text('I would rather not.'));
    const kbId = await kbIdOf(t, w.project, w.kb);
    const res = await t.http.post(`/api/projects/${w.project}/knowledge_bases/${w.kb}/evaluations`).send({
      evaluation: {
        generate_data: { count: 10 },
        llm: { provider: 'openai', model_name: 'm', api_key: 'sk-b', base_url: babbler.baseUrl },
      },
    });
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const sql = await querySql(
      t,
      `EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb} USING generate_data = true, llm = {'provider': 'openai', 'model_name': 'm', 'api_key': 'sk-b', 'base_url': '${babbler.baseUrl}'}`,
    );
    expect(sql).toMatchObject({ type: 'error' });
    expect(sql.error_message).toContain(`EVALUATE KNOWLEDGE_BASE ${w.project}.${w.kb}`);
    expect((await eventsOf(t, `kb-${kbId}`)).filter((e) => e.type === 'KnowledgeBaseEvaluated')).toEqual([]);
  });
});
