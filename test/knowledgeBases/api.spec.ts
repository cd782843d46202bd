/**
 * Knowledge bases over REST (MindsDB's routes), with a provider's embeddings (a fake
 * OpenAI-compatible server on a real socket), and as an agent's kb_query_tool.
 */
import fs from 'node:fs';
import { fakeReply, latestToolResults, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { settled } from '../../src/context';
import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshPostgresData } from '../support/external';
import { givenDatabase } from '../support/world';

let counter = 0;
const unique = (prefix: string) => `${prefix}_${process.pid}_${++counter}`;

const DOCS = [
  {
    id: 'r1',
    content: 'Refunds: any item may be returned within 30 days of delivery for a full refund.',
    team: 'billing',
  },
  {
    id: 's1',
    content: 'Standard shipping takes three to five business days; express shipping arrives the next day.',
    team: 'logistics',
  },
  {
    id: 'w1',
    content: 'The warranty covers manufacturing defects for two years from the date of purchase.',
    team: 'support',
  },
];

const eventsOf = async (t: TestApp, stream: string) =>
  (
    (await t.http.get(`/api/events?stream=${stream}&limit=1000`).expect(200)).body as {
      events: { type: string; data: Record<string, unknown> }[];
    }
  ).events;

describe.each(storeKinds)('knowledge bases over REST (%s)', (store) => {
  let t: TestApp;
  const fakes: FakeOpenAi[] = [];
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
    await t.dispose();
  });
  const fake = async () => {
    const f = await startFakeOpenAi({ embeddingDimensions: 32 });
    fakes.push(f);
    return f;
  };
  const givenProject = async () => {
    const project = unique('p');
    await t.http.post('/api/projects').send({ name: project }).expect(201);
    return project;
  };

  it('creates (201, MindsDB fields), inserts rows, counts them, searches them, and deletes', async () => {
    const project = await givenProject();
    const name = unique('kb');
    const base = `/api/projects/${project}/knowledge_bases`;
    const created = await t.http
      .post(base)
      .send({
        knowledge_base: { name, metadata_columns: ['team'], params: { chunk_size: 500, chunk_overlap: 50 } },
      })
      .expect(201);
    expect(created.body).toMatchObject({
      name,
      embedding_model: { provider: 'mindledger', model_name: 'hashing' },
      content_columns: ['content'],
      metadata_columns: ['team'],
      id_column: 'id',
      params: { chunk_size: 500, chunk_overlap: 50 },
      documents: 0,
      chunks: 0,
      dimensions: null,
    });
    const inserted = await t.http
      .put(`${base}/${name}`)
      .send({ knowledge_base: { rows: DOCS } })
      .expect(200);
    expect(inserted.body).toEqual({ inserted_documents: 3, inserted_chunks: 3 });
    const got = await t.http.get(`${base}/${name.toUpperCase()}`).expect(200);
    expect(got.body).toMatchObject({ name, documents: 3, chunks: 3, dimensions: 384 });
    expect((await t.http.get(base).expect(200)).body.map((k: { name: string }) => k.name)).toEqual([name]);

    const found = await t.http
      .post(`${base}/${name}/completions`)
      .send({ query: 'how long is the warranty on defects?', type: 'context', limit: 2 })
      .expect(200);
    expect(found.body.documents).toHaveLength(2);
    expect(found.body.documents[0]).toMatchObject({
      id: 'w1',
      chunk_content: DOCS[2]!.content,
      metadata: { team: 'support' },
    });

    await t.http.delete(`${base}/${name}`).expect(204);
    problemOf(await t.http.get(`${base}/${name}`).expect(404));
    const stream = `project-${project}`;
    const types = (await eventsOf(t, stream)).map((e) => e.type);
    expect(types).toEqual(['ProjectCreated', 'KnowledgeBaseCreated', 'KnowledgeBaseDeleted']);
  });

  it('takes awkward documents (NUL, lone surrogates, emoji, nested metadata, numeric ids) without stopping the read model', async () => {
    const project = await givenProject();
    const base = `/api/projects/${project}/knowledge_bases`;
    await t.http
      .post(base)
      .send({ knowledge_base: { name: 'odd', params: { chunk_size: 12, chunk_overlap: 2 } } })
      .expect(201);
    const rows = [
      { id: 1, content: 'nul\u0000inside and more text', meta: { deep: [1, { x: null }] } },
      { id: 'e', content: '😀😀😀😀😀😀 emoji run', meta: 'plain' },
      { id: 's', content: 'lone \ud800 surrogate \udc00 here', meta: 3.5 },
      { id: 'blank', content: '   ' },
    ];
    const res = await t.http
      .put(`${base}/odd`)
      .set('content-type', 'application/json')
      .send(JSON.stringify({ knowledge_base: { rows } }));
    expect(res.status).toBe(200);
    expect(res.body.inserted_documents).toBe(3);
    const listed = await querySql(t, `SELECT DISTINCT id FROM ${project}.odd ORDER BY id`);
    expect(listed.data).toEqual([['1'], ['e'], ['s']]);
    const found = await querySql(t, `SELECT id FROM ${project}.odd WHERE content = 'emoji' LIMIT 1`);
    expect(found.data).toEqual([['e']]);
    // The read model keeps going: the next write is projected and read back.
    await t.http
      .post('/api/projects')
      .send({ name: unique('after') })
      .expect(201);
    expect((await t.http.get('/api/status').expect(200)).body.read_model.failed).toBeNull();
  });

  it('indexes nothing for documents recorded after their knowledge base was deleted (an insert that lost the race)', async () => {
    const project = await givenProject();
    const base = `/api/projects/${project}/knowledge_bases`;
    const kb = (
      await t.http
        .post(base)
        .send({ knowledge_base: { name: 'racy' } })
        .expect(201)
    ).body;
    await t.http
      .put(`${base}/racy`)
      .send({ knowledge_base: { rows: DOCS } })
      .expect(200);
    const [inserted] = await eventsOf(t, `kb-${kb.id}`);
    await t.http.delete(`${base}/racy`).expect(204);
    // The same insert again, appended after the deletion, as a request that loaded the knowledge
    // base just before it was deleted would.
    const late = await t.running.ctx.commands.run(
      `kb-${kb.id}`,
      { initialState: () => null, evolve: () => null },
      () => [{ type: 'KnowledgeBaseDocumentsInserted', data: inserted!.data } as never],
    );
    await settled(t.running.ctx, late.lastPosition);
    const tables = await t.running.ctx.duck.query(
      `SELECT table_name FROM duckdb_tables() WHERE schema_name = 'mdb_kb' AND table_name LIKE 'kb_${kb.id}%'`,
    );
    expect(tables).toEqual([]);
    expect((await t.http.get('/api/status').expect(200)).body.read_model.failed).toBeNull();
  });

  it('answers 409 for a duplicate, 404 for an unknown project, 400 naming what is wrong', async () => {
    const project = await givenProject();
    const base = `/api/projects/${project}/knowledge_bases`;
    await t.http
      .post(base)
      .send({ knowledge_base: { name: 'k' } })
      .expect(201);
    expect(
      problemOf(
        await t.http
          .post(base)
          .send({ knowledge_base: { name: 'K' } })
          .expect(409),
      ).detail,
    ).toMatch(/already exists/);
    problemOf(
      await t.http
        .post(`/api/projects/${unique('nope')}/knowledge_bases`)
        .send({ knowledge_base: { name: 'k' } })
        .expect(404),
    );
    const storage = problemOf(
      await t.http
        .post(base)
        .send({ knowledge_base: { name: 'k2', storage: { database: 'x', table: 'y' } } })
        .expect(400),
    );
    expect(storage.detail).toMatch(/storage/);
    const overlap = problemOf(
      await t.http
        .post(base)
        .send({ knowledge_base: { name: 'k3', params: { chunk_size: 100, chunk_overlap: 100 } } })
        .expect(400),
    );
    expect(overlap.detail).toMatch(/chunk_overlap/);
    const urls = problemOf(
      await t.http
        .put(`${base}/k`)
        .send({ knowledge_base: { urls: ['https://example.com'] } })
        .expect(400),
    );
    expect(urls.detail).toMatch(/crawl/);
    const noContent = problemOf(
      await t.http
        .put(`${base}/k`)
        .send({ knowledge_base: { rows: [{ id: 1, body: 'x' }] } })
        .expect(400),
    );
    expect(noContent.detail).toMatch(/content/);
    // A blank question is refused as SQL refuses it, before anything is embedded.
    for (const query of ['', ' ', '\t\n \u3000'])
      expect(
        problemOf(await t.http.post(`${base}/k/completions`).send({ query }).expect(400)).detail,
      ).toMatch(/query must not be blank/);
    expect((await eventsOf(t, `project-${project}`)).map((e) => e.type)).toEqual([
      'ProjectCreated',
      'KnowledgeBaseCreated',
    ]);
  });

  it("embeds through a provider's /v1/embeddings with the KB's key, never shows the key, and a rebuild calls no provider", async () => {
    const f = await fake();
    const project = await givenProject();
    const name = unique('kb');
    const key = `sk-kb-${unique('key')}`;
    const base = `/api/projects/${project}/knowledge_bases`;
    const created = await t.http
      .post(base)
      .send({
        knowledge_base: {
          name,
          embedding_model: {
            provider: 'openai',
            model_name: 'fake-embedding',
            base_url: f.baseUrl,
            api_key: key,
          },
        },
      })
      .expect(201);
    expect(created.body.embedding_model.api_key).toBe('******');
    await t.http
      .put(`${base}/${name}`)
      .send({ knowledge_base: { rows: DOCS } })
      .expect(200);
    const embeddings = f.requests().filter((r) => r.path === '/v1/embeddings');
    expect(embeddings).toHaveLength(1);
    expect(embeddings[0]!.headers.authorization).toBe(`Bearer ${key}`);
    expect((embeddings[0]!.body as { input: string[] }).input).toEqual(DOCS.map((d) => d.content));

    const question = `SELECT id, chunk_id, relevance FROM ${project}.${name} WHERE content = 'next day express shipping' LIMIT 3`;
    const before = await querySql(t, question);
    expect(before.data?.[0]?.[0]).toBe('s1');
    const shown = JSON.stringify([
      (await t.http.get(`${base}/${name}`).expect(200)).body,
      await querySql(t, 'SELECT * FROM information_schema.KNOWLEDGE_BASES'),
      await querySql(t, 'SELECT * FROM information_schema.EVENTS'),
    ]);
    expect(shown).not.toContain(key);

    const embeddingCalls = () => f.requests().filter((r) => r.path === '/v1/embeddings').length;
    expect(embeddingCalls()).toBe(2); // the documents, then the question
    await t.stop();
    fs.rmSync(t.config.duckdbFile, { force: true });
    fs.rmSync(`${t.config.duckdbFile}.wal`, { force: true });
    t = await t.restart();
    expect(embeddingCalls()).toBe(2); // the rebuild read the stored vectors
    const after = await querySql(t, question);
    expect(after.data).toEqual(before.data);
    expect(embeddingCalls()).toBe(3);
  });

  it('records nothing when the provider fails (502 naming it)', async () => {
    const f = await fake();
    const project = await givenProject();
    const name = unique('kb');
    const base = `/api/projects/${project}/knowledge_bases`;
    await t.http
      .post(base)
      .send({
        knowledge_base: {
          name,
          embedding_model: { provider: 'openai', model_name: 'e', base_url: f.baseUrl, api_key: 'k' },
        },
      })
      .expect(201);
    f.failEmbeddings(fakeReply.error(400, 'bad input'));
    const res = await t.http.put(`${base}/${name}`).send({ knowledge_base: { rows: DOCS } });
    expect(res.status).toBe(502);
    expect(problemOf(res).detail).toMatch(/embedding provider/i);
    const kb = (await t.http.get(`${base}/${name}`).expect(200)).body;
    expect(kb).toMatchObject({ documents: 0, chunks: 0 });
    expect(await eventsOf(t, `kb-${kb.id}`)).toEqual([]);
  });

  it('gives an agent with data.knowledge_bases a kb_query_tool whose passages the answer cites in context', async () => {
    const f = await fake();
    const project = await givenProject();
    const name = unique('kb');
    await t.http
      .post(`/api/projects/${project}/knowledge_bases`)
      .send({ knowledge_base: { name } })
      .expect(201);
    await t.http
      .put(`/api/projects/${project}/knowledge_bases/${name}`)
      .send({ knowledge_base: { rows: DOCS } })
      .expect(200);
    const agent = unique('a');
    await t.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: {
          name: agent,
          model: { provider: 'openai', model_name: 'gpt-test', api_key: 'sk-a', base_url: f.baseUrl },
          data: { knowledge_bases: [name] },
        },
      })
      .expect(201);
    f.conversation([
      fakeReply.toolCall('kb_query_tool', { query: 'refund window for returns', limit: 1 }),
      fakeReply.text('You have 30 days [r1:1of1].'),
    ]);
    const res = await t.http
      .post(`/api/projects/${project}/agents/${agent}/completions`)
      .send({ messages: [{ question: 'How long do I have to return something?', answer: null }] })
      .expect(200);
    expect(res.body.message.content).toBe('You have 30 days [r1:1of1].');
    expect(res.body.message.context).toEqual([
      expect.objectContaining({
        knowledge_base: name,
        id: expect.stringMatching(/^r1:1of1:/),
        content: DOCS[0]!.content,
      }),
    ]);
    const toolResults = latestToolResults(f.chatRequests()[1]!);
    expect(JSON.stringify(toolResults)).toContain('within 30 days of delivery');
  });

  it('inserts the rows of a query (PUT with query, run in the project) from a PostgreSQL integration', async () => {
    const pg = await freshPostgresData([
      'CREATE TABLE notes (id integer PRIMARY KEY, content text NOT NULL, team text NOT NULL)',
      `INSERT INTO notes VALUES
        (1, 'The office coffee machine is descaled every Friday morning.', 'facilities'),
        (2, 'Expense reports must be filed within sixty days of the purchase.', 'finance'),
        (3, 'Badges for visitors are printed at the front desk on arrival.', 'facilities')`,
    ]);
    try {
      const db = await givenDatabase(t, { engine: 'postgres', parameters: pg.parameters });
      const project = await givenProject();
      const name = unique('kb');
      const base = `/api/projects/${project}/knowledge_bases`;
      const kb = (
        await t.http
          .post(base)
          .send({ knowledge_base: { name, metadata_columns: ['team'] } })
          .expect(201)
      ).body as { id: number };
      const inserted = await t.http
        .put(`${base}/${name}`)
        .send({
          knowledge_base: {
            query: `SELECT id, content, team FROM ${db.name}.notes WHERE team = 'facilities'`,
          },
        })
        .expect(200);
      expect(inserted.body).toEqual({ inserted_documents: 2, inserted_chunks: 2 });
      expect((await t.http.get(`${base}/${name}`).expect(200)).body).toMatchObject({
        documents: 2,
        chunks: 2,
      });
      const found = await t.http
        .post(`${base}/${name}/completions`)
        .send({ query: 'where are visitor badges printed?', type: 'context', limit: 1 })
        .expect(200);
      expect(found.body.documents).toEqual([
        expect.objectContaining({
          id: '3',
          chunk_content: 'Badges for visitors are printed at the front desk on arrival.',
          metadata: { team: 'facilities' },
        }),
      ]);
      const listed = await querySql(t, `SELECT DISTINCT id FROM ${project}.${name} ORDER BY id`);
      expect(listed.data).toEqual([['1'], ['3']]);
      const events = await eventsOf(t, `kb-${kb.id}`);
      expect(events.map((e) => [e.type, e.data.documents, e.data.chunks])).toEqual([
        ['KnowledgeBaseDocumentsInserted', 2, 2],
      ]);
      await t.http.delete(`/api/databases/${db.name}`).expect(204);
    } finally {
      await pg.drop();
    }
  });

  it('gives an agent with a knowledge_base skill a kb_query_tool over that knowledge base, whose chunks its answer cites', async () => {
    const f = await fake();
    const project = await givenProject();
    const name = unique('kb');
    await t.http
      .post(`/api/projects/${project}/knowledge_bases`)
      .send({ knowledge_base: { name, metadata_columns: ['team'] } })
      .expect(201);
    await t.http
      .put(`/api/projects/${project}/knowledge_bases/${name}`)
      .send({ knowledge_base: { rows: DOCS } })
      .expect(200);
    const skill = unique('s');
    await t.http
      .post(`/api/projects/${project}/skills`)
      .send({
        skill: {
          name: skill,
          type: 'knowledge_base',
          params: { source: name, description: 'store policies' },
        },
      })
      .expect(201);
    const agent = unique('a');
    const created = await t.http
      .post(`/api/projects/${project}/agents`)
      .send({
        agent: {
          name: agent,
          model: { provider: 'openai', model_name: 'gpt-test', api_key: 'sk-a', base_url: f.baseUrl },
          skills: [skill],
        },
      })
      .expect(201);
    expect(created.body.skills.map((s: { name: string }) => s.name)).toEqual([skill]);
    f.conversation([
      fakeReply.toolCall('kb_query_tool', { query: 'how long is the warranty', limit: 1 }),
      fakeReply.text('Two years [w1:1of1].'),
    ]);
    const res = await t.http
      .post(`/api/projects/${project}/agents/${agent}/completions`)
      .send({ messages: [{ question: 'What does the warranty cover?', answer: null }] })
      .expect(200);
    expect(res.body.message).toEqual({
      role: 'assistant',
      content: 'Two years [w1:1of1].',
      trace_id: expect.any(String),
      context: [
        {
          knowledge_base: name,
          id: `w1:1of1:0to${DOCS[2]!.content.length}`,
          content: DOCS[2]!.content,
          metadata: { document_id: 'w1', team: 'support' },
          relevance: expect.any(Number),
        },
      ],
    });

    const [first, second] = f.chatRequests();
    expect(first!.tools!.map((tool) => tool.function.name)).toEqual(['kb_query_tool']);
    expect(first!.tools![0]!.function.description).toContain(`Search the knowledge base ${name} `);
    expect(first!.tools![0]!.function.description).toContain('About them: store policies.');
    const [result] = latestToolResults(second!);
    expect(result!.name).toBe('kb_query_tool');
    expect(result!.content).toContain('manufacturing defects for two years');

    const run = await t.http
      .get(`/api/projects/${project}/agents/${agent}/runs/${res.body.message.trace_id}`)
      .expect(200);
    expect(
      (run.body.steps as { kind: string; name: string; rows: number | null }[])
        .filter((s) => s.kind === 'tool')
        .map((s) => [s.name, s.rows]),
    ).toEqual([['kb_query_tool', 1]]);
  });
});
