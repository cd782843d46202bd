/**
 * GET /api/metrics: every family the operator reads, and the numbers move with what the service
 * does (requests by route pattern, commands, SQL statements and caches, the log and the read
 * model, work in flight), on both stores.
 */
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { csvFile } from '../support/modelsData';
import { givenDatabase, givenFile, givenProject, uniqueName } from '../support/world';
import { fakeReply, startFakeOpenAi } from '../support/fakeOpenAi';
import { scrape, type Scrape } from './exposition';

const REQUESTS = 'mindledger_http_request_duration_seconds_count';

/** How much each sample named moved between two scrapes. */
const moved = (before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}) =>
  after.value(name, labels) - before.value(name, labels);

/** Polls until `check` holds for a scrape (at most 10 s): gauges of work that is running now. */
const eventually = async (t: TestApp, check: (s: Scrape) => boolean) => {
  for (let i = 0; i < 200; i++) {
    const s = await scrape(t);
    if (check(s)) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the metrics never showed it');
};

describe.each(storeKinds)('GET /api/metrics (event store: %s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t.dispose());

  it('given 3 projects created, then commands and appends counted them, and the POST /api/projects histogram counted 3', async () => {
    const before = await scrape(t);
    for (let i = 0; i < 3; i++) await givenProject(t);
    const after = await scrape(t);

    expect(after.value('mindledger_commands_total')).toBeGreaterThanOrEqual(3);
    expect(moved(before, after, 'mindledger_commands_total')).toBeGreaterThanOrEqual(3);
    expect(moved(before, after, 'mindledger_event_appends_total')).toBeGreaterThanOrEqual(3);
    expect(moved(before, after, 'mindledger_events_appended_total')).toBeGreaterThanOrEqual(3);
    expect(after.has('mindledger_command_conflicts_total')).toBe(true);
    expect(
      moved(before, after, REQUESTS, { route: '/api/projects', method: 'POST', status_class: '2xx' }),
    ).toBe(3);
    // Buckets are cumulative: the largest holds every request.
    expect(
      after.value('mindledger_http_request_duration_seconds_bucket', {
        route: '/api/projects',
        method: 'POST',
        status_class: '2xx',
        le: '+Inf',
      }),
    ).toBe(after.value(REQUESTS, { route: '/api/projects', method: 'POST', status_class: '2xx' }));
  });

  it('labels requests by route pattern, never by the names in the path; unknown paths are `unmatched`', async () => {
    const { name } = await givenProject(t);
    const before = await scrape(t);
    await t.http.get(`/api/projects/${name}`).expect(200);
    await t.http.get(`/api/projects/${uniqueName('missing')}`).expect(404);
    await t.http.get('/api/no/such/route').expect(404);
    const after = await scrape(t);

    const pattern = { route: '/api/projects/:project', method: 'GET' };
    expect(moved(before, after, REQUESTS, { ...pattern, status_class: '2xx' })).toBe(1);
    expect(moved(before, after, REQUESTS, { ...pattern, status_class: '4xx' })).toBe(1);
    expect(moved(before, after, REQUESTS, { route: 'unmatched', method: 'GET', status_class: '4xx' })).toBe(
      1,
    );
    expect(after.text).not.toContain(name);
  });

  it('reports where the log and the read model stand, as /api/status does', async () => {
    const { name } = await givenProject(t);
    // A read waits for the read model to include the write (answered ahead of it); status does not.
    await t.http.get(`/api/projects/${name}`).expect(200);
    const status = (await t.http.get('/api/status').expect(200)).body.read_model as {
      position: string;
      failed: unknown;
    };
    const s = await scrape(t);
    expect(s.value('mindledger_event_log_up')).toBe(1);
    expect(s.value('mindledger_read_model_position')).toBe(Number(status.position));
    expect(s.value('mindledger_event_log_head_position')).toBe(Number(status.position));
    expect(s.value('mindledger_read_model_lag_events')).toBe(0);
    expect(s.value('mindledger_read_model_failed')).toBe(0);
  });

  it('counts SQL statements by kind and outcome, errors by code, and answer-cache hits and misses', async () => {
    const before = await scrape(t);
    const select = `SELECT name FROM information_schema.databases WHERE name = '${uniqueName('nothing')}'`;
    expect((await querySql(t, select)).type).toBe('table');
    expect((await querySql(t, select)).type).toBe('table');
    // The same query in another text: found by its text as rewritten for DuckDB.
    expect((await querySql(t, `${select} /* again */`)).type).toBe('table');
    const failed = await querySql(t, 'SELECT * FROM no_such_table_anywhere');
    expect(failed.type).toBe('error');
    expect((await querySql(t, `CREATE PROJECT ${uniqueName('sqlproj')}`)).type).toBe('ok');
    expect((await querySql(t, 'FROBNICATE everything')).type).toBe('error');
    const after = await scrape(t);

    const statements = 'mindledger_sql_statement_duration_seconds_count';
    expect(moved(before, after, statements, { kind: 'select', outcome: 'table' })).toBe(3);
    expect(moved(before, after, statements, { kind: 'select', outcome: 'error' })).toBe(1);
    expect(moved(before, after, statements, { kind: 'create_project', outcome: 'ok' })).toBe(1);
    expect(moved(before, after, statements, { kind: 'invalid', outcome: 'error' })).toBe(1);
    expect(
      moved(before, after, 'mindledger_sql_errors_total', {
        kind: 'select',
        code: String(failed.error_code),
      }),
    ).toBe(1);
    expect(moved(before, after, 'mindledger_sql_errors_total', { kind: 'invalid', code: '1064' })).toBe(1);
    // The first SELECT missed the answer cache (one look-up counted), the second and third were
    // answered from it; the failed one missed it.
    expect(moved(before, after, 'mindledger_sql_cache_misses_total', { cache: 'answer' })).toBe(2);
    expect(moved(before, after, 'mindledger_sql_cache_hits_total', { cache: 'answer' })).toBe(2);
    expect(
      moved(before, after, 'mindledger_sql_cache_misses_total', { cache: 'statement' }),
    ).toBeGreaterThanOrEqual(1);
    // One cache of answers, one of plans (DuckDB's prepared statements are not counted).
    const caches = new Set(
      after.samples.filter((s) => s.name.startsWith('mindledger_sql_cache_')).map((s) => s.labels.cache),
    );
    expect([...caches].sort()).toEqual(['answer', 'statement']);
  });

  it("exposes Node's process metrics from the app's own registry", async () => {
    const s = await scrape(t);
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      expect(s.has(name)).toBe(true);
  });
});

describe('work in flight', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(async () => {
    await t.running.services.models.idle();
    await t.dispose();
  });

  it('given an agent whose provider answers slowly, then agent runs in flight is 1 while it runs and 0 after', async () => {
    const fake = await startFakeOpenAi();
    try {
      fake.enqueue(fakeReply.text('slowly, the answer', { delayMs: 1500 }));
      const { name: project } = await givenProject(t);
      const agent = uniqueName('agent');
      await t.http
        .post(`/api/projects/${project}/agents`)
        .send({
          agent: {
            name: agent,
            model: { model_name: 'gpt-test', provider: 'openai', api_key: 'sk-test', base_url: fake.baseUrl },
          },
        })
        .expect(201);
      expect((await scrape(t)).value('mindledger_agent_runs_in_flight')).toBe(0);
      const answer = t.http
        .post(`/api/projects/${project}/agents/${agent}/completions`)
        .send({ messages: [{ question: 'anyone there?', answer: null }] })
        .then((r) => r);
      await eventually(t, (s) => s.value('mindledger_agent_runs_in_flight') === 1);
      const res = await answer;
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).toContain('slowly, the answer');
      expect((await scrape(t)).value('mindledger_agent_runs_in_flight')).toBe(0);
    } finally {
      await fake.close();
    }
  });

  it('given a training whose rows take a while to read, then trainings in flight is 1 while it runs and 0 after', async () => {
    const { name: project } = await givenProject(t);
    const database = await givenDatabase(t);
    // PostgreSQL sleeps before answering the training query: the training is in flight meanwhile.
    const slowRows = `SELECT g AS x, g * 2 AS y FROM generate_series(1, 40) AS g, pg_sleep(1.5) AS pause`;
    expect(
      (await querySql(t, `CREATE MODEL ${project}.doubled FROM ${database.name} (${slowRows}) PREDICT y`))
        .type,
    ).toBe('table');
    await eventually(t, (s) => s.value('mindledger_trainings_in_flight') === 1);
    await t.running.services.models.idle();
    expect((await scrape(t)).value('mindledger_trainings_in_flight')).toBe(0);
    const status = await querySql(t, `SELECT STATUS FROM ${project}.models WHERE NAME = 'doubled'`);
    expect(status.data).toEqual([['complete']]);
  });
});

describe('one registry per app', () => {
  it('given two apps in one process, then each counts only its own requests', async () => {
    const a = await startTestApp('sqlite');
    const b = await startTestApp('sqlite');
    try {
      const file = csvFile([{ n: 1 }], uniqueName('one_row'));
      await givenFile(a, file);
      const route = { route: '/api/files/:name', method: 'PUT', status_class: '2xx' };
      expect((await scrape(a)).value(REQUESTS, route)).toBe(1);
      expect((await scrape(b)).value(REQUESTS, route)).toBe(0);
    } finally {
      await a.dispose();
      await b.dispose();
    }
  });
});
