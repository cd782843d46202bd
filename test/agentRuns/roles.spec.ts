/**
 * The new doors and the roles (docs/security.md "Sign-in and roles"), over REST and SQL:
 * - EVALUATE KNOWLEDGE_BASE writes an event: editor and admin (REST and SQL); a project-scoped token
 *   over REST in its project only (in SQL a scoped token runs reading statements only); analyst and
 *   auditor refused;
 * - reading evaluations and replaying a run read: analyst too, as reading runs; not the auditor
 *   (runs are not an auditor's to read); a scoped token in its project only;
 * - a fork asks the agent and writes a thread: editor and admin, a scoped token in its project.
 * Every refusal leaves the log where it stood.
 */
import { storeKinds, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { ADMIN, login, projectToken, startAuthApp, userWithRole } from '../auth/support';
import { evalFile } from '../knowledgeBases/support-eval';

type Caller = { name: string; headers: Record<string, string> };

describe.each(storeKinds)('roles at the evaluation, replay and fork doors (%s)', (store) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  const callers: Caller[] = [];
  const runs: Record<string, string> = {};
  const PROJECTS = ['pa', 'pb'];
  beforeAll(async () => {
    fake = (await startFakeOpenAi()).setFallback(fakeReply.text('an answer'));
    t = await startAuthApp(store);
    const admin = await login(t, ADMIN.name, ADMIN.password);
    const as = { Cookie: admin };
    await t.http
      .put('/api/files/role_questions')
      .set(as)
      .attach('file', evalFile('questions.csv'), 'role_questions.csv')
      .expect(200);
    for (const p of PROJECTS) {
      await t.http.post('/api/projects').set(as).send({ name: p }).expect(201);
      await t.http
        .post(`/api/projects/${p}/knowledge_bases`)
        .set(as)
        .send({ knowledge_base: { name: 'kb', content_columns: ['content'], id_column: 'id' } })
        .expect(201);
      await t.http
        .put(`/api/projects/${p}/knowledge_bases/kb`)
        .set(as)
        .send({ knowledge_base: { rows: [{ id: 'd000', content: 'Record alpha one.' }] } })
        .expect(200);
      // Questions a token scoped to the project can read: a view of its own.
      const view = await t.http
        .post('/api/sql/query')
        .set(as)
        .send({ query: `CREATE VIEW ${p}.questions AS (SELECT 'alpha one' AS question, 'd000' AS doc_id)` })
        .expect(200);
      expect(view.body).toMatchObject({ type: 'ok' });
      await t.http
        .post(`/api/projects/${p}/agents`)
        .set(as)
        .send({
          agent: {
            name: 'ag',
            model: { model_name: 'm', provider: 'openai', api_key: 'sk-r', base_url: fake.baseUrl },
          },
        })
        .expect(201);
      const asked = await t.http
        .post(`/api/projects/${p}/agents/ag/completions`)
        .set(as)
        .send({ messages: [{ question: 'hi' }] })
        .expect(200);
      runs[p] = (asked.body as { message: { trace_id: string } }).message.trace_id;
    }
    callers.push({ name: 'admin', headers: as });
    for (const role of ['editor', 'analyst', 'auditor'])
      callers.push({
        name: role,
        headers: { Cookie: (await userWithRole(t, admin, `u_${role}`, role)).cookie },
      });
    callers.push({
      name: 'token(pa)',
      headers: { Authorization: `Bearer ${await projectToken(t, admin, 'pa')}` },
    });
  }, 120_000);
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });

  const head = async () =>
    ((await t.http.get('/api/ready').set(callers[0]!.headers).expect(200)).body as { log_head: string })
      .log_head;

  /** Who may, by door and project (restating the rules above, not the code). */
  const allowed = (caller: string, door: string, project: string) => {
    if (caller === 'token(pa)') return project === 'pa' && door !== 'sql-evaluate';
    if (caller === 'admin' || caller === 'editor') return true;
    if (caller === 'analyst') return door === 'rest-evaluations' || door === 'rest-replay';
    return false;
  };

  it('each caller gets what the rules say at each door, and a refusal writes nothing', async () => {
    const seen: string[] = [];
    const expected: string[] = [];
    for (const caller of callers)
      for (const project of PROJECTS)
        for (const door of [
          'rest-evaluate',
          'sql-evaluate',
          'rest-evaluations',
          'rest-replay',
          'rest-fork',
        ]) {
          const before = await head();
          let outcome: string;
          switch (door) {
            case 'rest-evaluate': {
              const res = await t.http
                .post(`/api/projects/${project}/knowledge_bases/kb/evaluations`)
                .set(caller.headers)
                .send({ evaluation: { test_table: `${project}.questions` } });
              outcome =
                res.status === 201 ? 'allowed' : res.status === 403 ? 'refused' : `status ${res.status}`;
              break;
            }
            case 'sql-evaluate': {
              const res = await t.http
                .post('/api/sql/query')
                .set(caller.headers)
                .send({
                  query: `EVALUATE KNOWLEDGE_BASE ${project}.kb USING test_table = files.role_questions`,
                });
              const body = res.body as { type: string; error_code?: number };
              outcome =
                body.type === 'table'
                  ? 'allowed'
                  : body.error_code === 1227 || res.status === 403
                    ? 'refused'
                    : `error ${body.error_code}`;
              break;
            }
            case 'rest-evaluations': {
              const res = await t.http
                .get(`/api/projects/${project}/knowledge_bases/kb/evaluations`)
                .set(caller.headers);
              outcome =
                res.status === 200 ? 'allowed' : res.status === 403 ? 'refused' : `status ${res.status}`;
              break;
            }
            case 'rest-replay': {
              const res = await t.http
                .get(`/api/projects/${project}/agents/ag/runs/${runs[project]}/replay`)
                .set(caller.headers);
              outcome =
                res.status === 200 ? 'allowed' : res.status === 403 ? 'refused' : `status ${res.status}`;
              break;
            }
            default: {
              const res = await t.http
                .post(`/api/projects/${project}/agents/ag/runs/${runs[project]}/fork`)
                .set(caller.headers)
                .send({ messages: [{ question: 'and then?' }] });
              outcome =
                res.status === 200 ? 'allowed' : res.status === 403 ? 'refused' : `status ${res.status}`;
            }
          }
          seen.push(`${caller.name} ${door} ${project}: ${outcome}`);
          expected.push(
            `${caller.name} ${door} ${project}: ${allowed(caller.name, door, project) ? 'allowed' : 'refused'}`,
          );
          if (outcome === 'refused')
            expect({ door, caller: caller.name, project, head: await head() }).toEqual({
              door,
              caller: caller.name,
              project,
              head: before,
            });
        }
    expect(seen).toEqual(expected);
  }, 300_000);

  it('reads the test table with the caller’s reach: a token scoped to pa may not read files through it', async () => {
    const token = callers.find((c) => c.name === 'token(pa)')!;
    const before = await head();
    const res = await t.http
      .post('/api/projects/pa/knowledge_bases/kb/evaluations')
      .set(token.headers)
      .send({ evaluation: { test_table: 'files.role_questions' } });
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 403, detail: expect.stringContaining('pa') });
    expect(await head()).toBe(before);
  });
});
