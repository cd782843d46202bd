/**
 * Secrets that can be forgotten (crypto-shredding), on both stores: a secret is sealed before it
 * enters the log (the stored events, read with the database's own client, never hold it), is opened
 * again for the code that needs it, and `DELETE …?forget=true` / `DROP DATABASE … FORGET` destroys
 * its data key, after which nothing (log, read model, API answers, the log's own replay) gives it
 * back, while the log still verifies.
 */
import crypto from 'node:crypto';
import { databaseAggregate, databaseStream } from '../../src/databases/state';
import { FORGOTTEN } from '../../src/ledger/sealing';
import { mlEngineStream } from '../../src/mlEngines/state';
import { projectStream } from '../../src/shared/projectState';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { storedLog } from '../support/storedLog';
import { postgresParameters } from '../support/external';
import { startFakeOpenAi } from '../support/fakeOpenAi';

/** What every reader is shown: the resource, the SQL catalogue, the audit trail of events. */
const everyAnswer = async (t: TestApp, name: string) => {
  const answers = [
    await t.http.get(`/api/databases/${name}`),
    await t.http.get('/api/databases'),
    await t.http.post('/api/sql/query').send({ query: 'SELECT * FROM information_schema.events' }),
    await t.http.post('/api/sql/query').send({ query: 'SHOW FULL DATABASES' }),
    await t.http.get('/api/audit/events?limit=1000'),
  ];
  return answers.map((r) => r.text).join('\n');
};

const streamParameters = async (t: TestApp, name: string) => {
  const { state } = await t.running.ctx.commands.load(databaseStream(name), databaseAggregate);
  return 'parameters' in state ? (state.parameters as Record<string, unknown>) : undefined;
};

describe.each(storeKinds)('forgettable secrets on %s', (store) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(store);
  });
  afterEach(() => t.dispose());

  const password = () => `pw-${crypto.randomBytes(9).toString('hex')}`;

  it('given a database registered with a password and a connection URL, then the stored log holds neither, the service still reads both, and every answer masks them', async () => {
    const secret = password();
    const urlSecret = password();
    await t.http
      .post('/api/databases')
      .send({
        database: {
          name: 'vault_db',
          engine: 'postgres',
          parameters: postgresParameters({
            password: secret,
            sslrootcert_url: `https://reader:${urlSecret}@certs.example/root.pem`,
          }),
        },
      })
      .expect(201);

    const stored = await storedLog(store, t);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(urlSecret);
    expect(stored).toMatch(/enc:v1:r[0-9a-f]{32}-[0-9a-f]{16}:/);
    // The URL keeps its shape in the log: only its password is sealed.
    expect(stored).toMatch(/https:\/\/reader:enc:v1:[^@"]+@certs\.example\/root\.pem/);

    const parameters = await streamParameters(t, 'vault_db');
    expect(parameters?.password).toBe(secret);
    expect(parameters?.sslrootcert_url).toBe(`https://reader:${urlSecret}@certs.example/root.pem`);

    const shown = await everyAnswer(t, 'vault_db');
    expect(shown).not.toContain(secret);
    expect(shown).not.toContain(urlSecret);
    expect(shown).toContain('https://reader:******@certs.example/root.pem');

    // The connection works with the opened password: a query through it answers.
    const answer = await t.http
      .post('/api/sql/query')
      .send({ query: 'SELECT 1 AS one FROM vault_db.pg_catalog.pg_namespace LIMIT 1' });
    expect(answer.body).toMatchObject({ type: 'table', data: [[1]] });
  });

  it('given a database with a password, when it is deleted with ?forget=true, then its key is gone, the log records it and still verifies, and its events replay with the secret forgotten', async () => {
    const secret = password();
    await t.http
      .post('/api/databases')
      .send({
        database: {
          name: 'gone_db',
          engine: 'postgres',
          parameters: postgresParameters({ password: secret }),
        },
      })
      .expect(201);
    // An update copies the sealed password along (it is not sent again).
    await t.http
      .put('/api/databases/gone_db')
      .send({ database: { parameters: postgresParameters({ password: '******', connect_timeout: 5 }) } })
      .expect(200);
    expect((await streamParameters(t, 'gone_db'))?.password).toBe(secret);

    const deleted = await t.http.delete('/api/databases/gone_db?forget=true');
    expect(deleted.status).toBe(204);

    const events = await t.running.ctx.log.readPage({ after: 0n, limit: 1000 });
    const destroyed = events.filter((e) => e.type === 'DataKeysDestroyed');
    expect(destroyed).toHaveLength(1);
    expect(destroyed[0]!.data).toMatchObject({ keyIds: [expect.stringMatching(/^r[0-9a-f]{32}-/)] });

    // Replaying the database's stream: the password is forgotten in every event that held it.
    const { events: replayed } = await t.running.ctx.log.readStream(databaseStream('gone_db'), 0n);
    const passwords = replayed.flatMap((e) =>
      'parameters' in e.data ? [(e.data.parameters as Record<string, unknown>).password] : [],
    );
    expect(passwords).toEqual([FORGOTTEN, FORGOTTEN]);

    const stored = await storedLog(store, t);
    expect(stored).not.toContain(secret);
    expect(await everyAnswer(t, 'gone_db')).not.toContain(secret);

    const verified = await t.http.get('/api/audit/verify').expect(200);
    expect(verified.body).toMatchObject({ ok: true });

    // Nothing left to forget: the database is not found.
    const again = await t.http.delete('/api/databases/gone_db?forget=true');
    expect(again.status).toBe(404);
    expect(again.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  it('given two databases with secrets, when one is dropped with DROP DATABASE … FORGET in SQL, then only its secret is forgotten, and a database registered again under its name has a secret of its own', async () => {
    const kept = password();
    const forgotten = password();
    for (const [name, pw] of [
      ['keep_db', kept],
      ['drop_db', forgotten],
    ] as const)
      await t.http
        .post('/api/databases')
        .send({ database: { name, engine: 'postgres', parameters: postgresParameters({ password: pw }) } })
        .expect(201);

    const dropped = await t.http.post('/api/sql/query').send({ query: 'DROP DATABASE drop_db FORGET' });
    expect(dropped.body).toMatchObject({ type: 'ok' });

    expect((await streamParameters(t, 'keep_db'))?.password).toBe(kept);
    const { events } = await t.running.ctx.log.readStream(databaseStream('drop_db'), 0n);
    expect(events.map((e) => ('parameters' in e.data ? e.data.parameters.password : null))).toEqual([
      FORGOTTEN,
      null,
    ]);

    const fresh = password();
    await t.http
      .post('/api/databases')
      .send({
        database: {
          name: 'drop_db',
          engine: 'postgres',
          parameters: postgresParameters({ password: fresh }),
        },
      })
      .expect(201);
    expect((await streamParameters(t, 'drop_db'))?.password).toBe(fresh);

    // IF EXISTS … FORGET on nothing left: no error.
    await t.http.delete('/api/databases/drop_db?forget=true').expect(204);
    const none = await t.http
      .post('/api/sql/query')
      .send({ query: 'DROP DATABASE IF EXISTS drop_db FORGET' });
    expect(none.body).toMatchObject({ type: 'ok' });
  });

  it('given a project, when it is deleted with ?forget=true, then it is refused and nothing is deleted', async () => {
    await t.http.post('/api/projects').send({ name: 'holder' }).expect(201);
    const refused = await t.http.delete('/api/databases/holder?forget=true');
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/holder is a project/);
    await t.http.get('/api/projects/holder').expect(200);
  });

  /** The api_key of every event of a project's stream that names one (as replay reads them). */
  const projectKeys = async (name: string) =>
    (await t.running.ctx.log.readStream(projectStream('mindsdb'), 0n)).events.flatMap((e) => {
      const data = e.data as { name?: string; params?: Record<string, unknown> };
      return data.params && 'api_key' in data.params && data.name === name ? [data.params.api_key] : [];
    });

  it('given an agent with an API key that was renamed, a skill and a chatbot with secrets, when each is deleted with forget (REST and SQL), then their secrets are forgotten under every name, and another agent keeps its own', async () => {
    const [agentKey, skillKey, botKey, otherKey] = [password(), password(), password(), password()];
    for (const [name, key] of [
      ['leaving', agentKey],
      ['staying', otherKey],
    ] as const)
      await t.http
        .post('/api/projects/mindsdb/agents')
        .send({ agent: { name, model_name: 'gpt-4o', provider: 'openai', params: { api_key: key } } })
        .expect(201);
    await t.http
      .put('/api/projects/mindsdb/agents/leaving')
      .send({ agent: { name: 'renamed' } })
      .expect(200);
    await t.http
      .post('/api/projects/mindsdb/skills')
      .send({ skill: { name: 'sk', type: 'custom', params: { api_key: skillKey } } })
      .expect(201);
    await t.http
      .post('/api/databases')
      .send({ database: { name: 'chat_db', engine: 'postgres', parameters: postgresParameters() } })
      .expect(201);
    await t.http
      .post('/api/projects/mindsdb/chatbots')
      .send({
        chatbot: {
          name: 'bot',
          agent_name: 'staying',
          database_name: 'chat_db',
          params: { api_key: botKey },
        },
      })
      .expect(201);
    expect(await projectKeys('renamed')).toEqual([agentKey]);
    expect(await projectKeys('leaving')).toEqual([agentKey]);

    await t.http.delete('/api/projects/mindsdb/agents/renamed?forget=true').expect(204);
    await t.http.delete('/api/projects/mindsdb/chatbots/bot?forget=true').expect(204);
    const dropped = await t.http.post('/api/sql/query').send({ query: 'DROP SKILL mindsdb.sk FORGET' });
    expect(dropped.body).toMatchObject({ type: 'ok' });

    // The agent's events under its first name and under its second: both forgotten.
    expect(await projectKeys('leaving')).toEqual([FORGOTTEN]);
    expect(await projectKeys('renamed')).toEqual([FORGOTTEN]);
    expect(await projectKeys('sk')).toEqual([FORGOTTEN]);
    expect(await projectKeys('bot')).toEqual([FORGOTTEN]);
    expect(await projectKeys('staying')).toEqual([otherKey]);
    const stored = await storedLog(store, t);
    for (const key of [agentKey, skillKey, botKey, otherKey]) expect(stored).not.toContain(key);
    const destroyed = (await t.running.ctx.log.readPage({ after: 0n, limit: 1000 })).filter(
      (e) => e.type === 'DataKeysDestroyed',
    );
    // One per name the secrets were sealed under: leaving, renamed, bot, sk.
    expect(destroyed).toHaveLength(4);
    await t.http.get('/api/audit/verify').expect(200, /"ok":true/);
  });

  it('given an ML engine with an API key, when it is dropped with DROP ML_ENGINE … FORGET, then its key is forgotten in its events', async () => {
    const key = password();
    const created = await t.http
      .post('/api/sql/query')
      .send({ query: `CREATE ML_ENGINE vault_llm FROM openai USING api_key = '${key}'` });
    expect(created.body).toMatchObject({ type: 'ok' });
    expect(await storedLog(store, t)).not.toContain(key);
    const dropped = await t.http.post('/api/sql/query').send({ query: 'DROP ML_ENGINE vault_llm FORGET' });
    expect(dropped.body).toMatchObject({ type: 'ok' });
    const { events } = await t.running.ctx.log.readStream(mlEngineStream('vault_llm'), 0n);
    const keys = events.flatMap((e) => {
      const parameters = (e.data as { parameters?: Record<string, unknown> }).parameters;
      return parameters && 'api_key' in parameters ? [parameters.api_key] : [];
    });
    expect(keys).toEqual([FORGOTTEN]);
  });

  it('given a knowledge base with an embedding API key, when it is deleted with ?forget=true, then its key is forgotten in its events and another keeps its own', async () => {
    const fake = await startFakeOpenAi();
    try {
      const [key, other] = [password(), password()];
      await t.http.post('/api/projects').send({ name: 'kbp' }).expect(201);
      for (const [name, apiKey] of [
        ['docs', key],
        ['notes', other],
      ])
        await t.http
          .post('/api/projects/kbp/knowledge_bases')
          .send({
            knowledge_base: {
              name,
              embedding_model: {
                provider: 'openai',
                model_name: 'e',
                base_url: fake.baseUrl,
                api_key: apiKey,
              },
            },
          })
          .expect(201);
      expect(await storedLog(store, t)).not.toContain(key);
      await t.http.delete('/api/projects/kbp/knowledge_bases/docs?forget=true').expect(204);
      const { events } = await t.running.ctx.log.readStream(projectStream('kbp'), 0n);
      const keyOf = (name: string) =>
        (
          events.find((e) => e.type === 'KnowledgeBaseCreated' && (e.data as { name: string }).name === name)!
            .data as { embeddingModel: Record<string, unknown> }
        ).embeddingModel.api_key;
      expect([keyOf('docs'), keyOf('notes')]).toEqual([FORGOTTEN, other]);
    } finally {
      await fake.close();
    }
  });

  it('given a log whose data keys are wrapped by one master key, when the service starts with another, then it refuses to start and says why; with the right one it starts', async () => {
    await t.http
      .post('/api/databases')
      .send({ database: { name: 'keyed', engine: 'postgres', parameters: postgresParameters() } })
      .expect(201);
    await expect(t.restart({ LEDGER_MASTER_KEY: crypto.randomBytes(32).toString('base64') })).rejects.toThrow(
      /LEDGER_MASTER_KEY cannot open this log's data keys/,
    );
    t = await t.restart();
    expect((await streamParameters(t, 'keyed'))?.password).toBe(postgresParameters().password);
  });
});
