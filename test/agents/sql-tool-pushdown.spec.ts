/**
 * An agent's SQL tool runs what a model wrote, and a prompt can steer a model: a skill over an
 * external database pushed the model's SELECT down whole, so `pg_read_file`, `lo_import` or
 * `set_config` ran there with the integration's stored credentials, whoever asked the agent. What
 * the tool pushes down is held to the read-only allow-list (src/sql/pushdownAllowList.ts) and runs in
 * a read-only transaction, as an analyst's SELECT does; ordinary reads still work.
 */
import { fakeReply, latestToolResults, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshPostgresData } from '../support/external';

describe.each(storeKinds)("an agent's SQL tool on an external database (%s)", (store) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let source: Awaited<ReturnType<typeof freshPostgresData>>;

  beforeAll(async () => {
    t = await startTestApp(store);
    fake = await startFakeOpenAi();
    source = await freshPostgresData(['CREATE TABLE t (n int)', 'INSERT INTO t VALUES (1), (2), (3)']);
    await t.http
      .post('/api/databases')
      .send({ database: { name: 'extpg', engine: 'postgres', parameters: source.parameters } })
      .expect(201);
    await t.http.post('/api/projects').send({ name: 'pa' }).expect(201);
    await t.http
      .post('/api/projects/pa/skills')
      .send({
        skill: { name: 'rows', type: 'sql', params: { database: 'extpg', tables: ['t'], description: 't' } },
      })
      .expect(201);
    await t.http
      .post('/api/projects/pa/agents')
      .send({
        agent: {
          name: 'helper',
          model: {
            model_name: 'gpt-test',
            provider: 'openai',
            api_key: 'sk-agent-key',
            base_url: fake.baseUrl,
          },
          skills: ['rows'],
        },
      })
      .expect(201);
    // A skill over the whole database (no table list): only the relation rule stands between the
    // model and the server's own catalogs.
    await t.http
      .post('/api/projects/pa/skills')
      .send({ skill: { name: 'everything', type: 'sql', params: { database: 'extpg', description: 'all' } } })
      .expect(201);
    await t.http
      .post('/api/projects/pa/agents')
      .send({
        agent: {
          name: 'wide',
          model: {
            model_name: 'gpt-test',
            provider: 'openai',
            api_key: 'sk-agent-key',
            base_url: fake.baseUrl,
          },
          skills: ['everything'],
        },
      })
      .expect(201);
  });
  afterAll(async () => {
    await fake?.close();
    await t?.dispose();
    await source?.drop();
  });

  /** The tool result the model was sent back for `query`. */
  const toolResultFor = async (query: string, agent = 'helper') => {
    fake.conversation([fakeReply.toolCall('sql_db_query', { query }), fakeReply.text('done')]);
    await t.http
      .post(`/api/projects/pa/agents/${agent}/completions`)
      .send({ messages: [{ question: 'look' }] })
      .expect(200);
    return String(latestToolResults(fake.chatRequests().at(-1)!)[0]!.content);
  };

  it.each([
    ["SELECT pg_read_file('/etc/hostname') AS f FROM extpg.t LIMIT 1", 'pg_read_file'],
    ["SELECT lo_import('/etc/hostname') AS f FROM extpg.t LIMIT 1", 'lo_import'],
    ["SELECT set_config('log_statement', 'all', false) AS f FROM extpg.t LIMIT 1", 'set_config'],
    ["SELECT pg_ls_dir('.') AS f FROM extpg.t LIMIT 1", 'pg_ls_dir'],
  ])('given a model writing %s, then the tool refuses it, naming the function', async (query, fn) => {
    const result = await toolResultFor(query);
    expect(result).toMatch(new RegExp(`agent role: function ${fn}\\(\\) is not pushed down to extpg`, 'i'));
    const os = await import('node:os');
    expect(result).not.toContain(os.hostname());
  });

  // Issue 57: the agent's tool reads the registered database's relations only, as an analyst does
  // (the fifth door of test/hardening/customer-relations.spec.ts's matrix): the skill's tables are
  // the registered schema's, so nothing else is ever sent.
  it.each([
    ['SELECT rolname, rolpassword FROM extpg.pg_catalog.pg_authid', 'pg_catalog.pg_authid'],
    ['SELECT usename, passwd FROM extpg.pg_shadow', 'pg_shadow'],
    ['SELECT query FROM extpg.pg_catalog.pg_stat_activity', 'pg_catalog.pg_stat_activity'],
    ['SELECT table_name FROM extpg.information_schema.tables', 'information_schema.tables'],
  ])(
    "given a model writing %s, then the tool refuses the server's own relation, naming it",
    async (query, relation) => {
      const result = await toolResultFor(query);
      // The skill offers the registered schema's tables only: refused before any text is sent.
      expect(result).toMatch(/^\{"error":/);
      expect(result).toContain(`extpg.${relation}`);
      expect(result).not.toMatch(/SCRAM-SHA-256|md5[0-9a-f]{32}/);
    },
  );

  it('given an ordinary read, then the tool answers its rows', async () => {
    const result = await toolResultFor('SELECT count(*) AS n, max(n) AS top FROM extpg.t');
    expect(result).toMatch(/3/);
    expect(result).not.toMatch(/not pushed down/);
    expect(await toolResultFor('SELECT count(*) AS n FROM extpg.public.t', 'wide')).toMatch(/3/);
  });
});
