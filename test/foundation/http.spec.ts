import { Writable } from 'node:stream';
import fc from 'fast-check';
import { problemOf, startTestApp, type TestApp } from '../support/app';
import { postgresParameters } from '../support/external';
import { hostileStrings, pathSegment } from '../support/hostile';

describe('HTTP conventions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { BODY_LIMIT: '2kb' });
  });
  afterAll(() => t.dispose());

  it('answers ping and status as MindsDB does', async () => {
    expect((await t.http.get('/api/util/ping').expect(200)).body).toEqual({ status: 'ok' });
    expect((await t.http.get('/api/util/ping/').expect(200)).body).toEqual({ status: 'ok' });
    const status = await t.http.get('/api/status').expect(200);
    expect(status.body).toEqual({
      mindsdb_version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      environment: 'local',
      auth: { http_auth_enabled: false, confirmed: true, provider: 'disabled' },
      read_model: expect.objectContaining({ position: expect.any(String), digest: expect.any(String) }),
    });
  });

  it('turns malformed JSON into a 400 problem', async () => {
    const res = await t.http
      .post('/api/projects')
      .set('Content-Type', 'application/json')
      .send('{"name": ')
      .expect(400);
    expect(problemOf(res)).toMatchObject({ title: 'Malformed JSON', status: 400 });
  });

  it('refuses a non-JSON body with 415', async () => {
    const res = await t.http
      .post('/api/projects')
      .set('Content-Type', 'text/plain')
      .send('name=x')
      .expect(415);
    expect(problemOf(res).detail).toMatch(/application\/json, not text\/plain/);
  });

  it('refuses a body over the configured limit with 413', async () => {
    const res = await t.http
      .post('/api/projects')
      .send({ name: 'x'.repeat(5000) })
      .expect(413);
    expect(problemOf(res).detail).toMatch(/exceeds the limit of 2048 bytes/);
  });

  it('answers 400 when a JSON body is missing', async () => {
    const res = await t.http.post('/api/projects').expect(400);
    expect(problemOf(res).detail).toMatch(/^body: /);
  });

  it('answers unknown paths with a 404 problem', async () => {
    const res = await t.http.get('/api/no/such/thing').expect(404);
    expect(problemOf(res)).toEqual({
      title: 'Not found',
      detail: expect.stringContaining('GET /api/no/such/thing'),
      status: 404,
    });
  });

  it('tags every answer with a request id', async () => {
    const res = await t.http.get('/api/util/ping').set('X-Request-Id', 'trace-me').expect(200);
    expect(res.headers['x-request-id']).toBe('trace-me');
  });

  it('routes a path whatever the case of its first two segments and with a trailing slash, as before routes were grouped by them', async () => {
    const projects = (await t.http.get('/api/projects').expect(200)).body as unknown;
    expect((await t.http.get('/API/Projects').expect(200)).body).toEqual(projects);
    expect((await t.http.get('/api/PROJECTS/').expect(200)).body).toEqual(projects);
    expect((await t.http.get('/Api/projects/MindsDB').expect(200)).body).toMatchObject({ name: 'mindsdb' });
    const answer = await t.http.post('/API/SQL/Query').send({ query: 'SELECT 1 AS one' }).expect(200);
    expect(answer.body).toMatchObject({ type: 'table', column_names: ['one'], data: [[1]] });
  });

  it('given generated second path segments (any code units, NUL, lone surrogates, long), then a 4xx problem, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileStrings(['projects', 'sql', 'PROJECTS', '/', ':x'], 3000),
        fc.boolean(),
        async (segment, raw) => {
          const res = await t.http.get(`/api/${pathSegment(segment, raw)}/x`);
          // 431: Node itself refuses a request line past its header limit, before any route.
          expect([400, 404, 431]).toContain(res.status);
          if (res.status !== 431) expect(problemOf(res).status).toBe(res.status);
        },
      ),
      { seed: 20261126, numRuns: 60 },
    );
  });

  it('documents every mounted route in the OpenAPI document and serves the interactive page', async () => {
    const doc = await t.http.get('/api/openapi.json').expect(200);
    expect(doc.body.openapi).toBe('3.1.0');
    const documented = new Set<string>();
    for (const [p, item] of Object.entries(doc.body.paths as Record<string, Record<string, unknown>>))
      for (const method of Object.keys(item)) documented.add(`${method} ${p}`);
    type RouteLayer = { route?: { path: string | string[]; methods: Record<string, boolean> } };
    type AppLayer = { handle: { stack?: RouteLayer[] } };
    const appLayers = t.running.app.router.stack as unknown as AppLayer[];
    // Routers mounted on the app, and the API's routes, which it groups by their first two segments.
    const apiGroups = [...t.running.api.groups.values()] as unknown as AppLayer['handle'][];
    const mounted = [...appLayers.map((layer) => layer.handle), ...apiGroups]
      .flatMap((router) => router.stack ?? [])
      // The API's routes; the console's pages (`/`, its assets) are not part of the API document.
      .flatMap((l) =>
        l.route && typeof l.route.path === 'string' && l.route.path.startsWith('/api') ? [l.route] : [],
      )
      .flatMap((r) =>
        Object.keys(r.methods).map((m) => `${m} ${(r.path as string).replace(/:([A-Za-z_]+)/g, '{$1}')}`),
      );
    expect(mounted.length).toBeGreaterThanOrEqual(t.running.api.routes.length);
    for (const route of mounted) expect(documented).toContain(route);
    expect(documented.size).toBe(new Set(mounted).size);
    // Read-your-writes: every operation takes X-Min-Log-Position; a write's success names X-Log-Position.
    const created = doc.body.paths['/api/projects'].post;
    expect(created.parameters).toContainEqual(
      expect.objectContaining({ name: 'X-Min-Log-Position', in: 'header', required: false }),
    );
    expect(Object.keys(created.responses['201'].headers)).toEqual(['X-Log-Position']);
    expect(doc.body.paths['/api/projects'].get.responses['200'].headers).toBeUndefined();
    const page = await t.http.get('/doc/').expect(200);
    expect(page.text).toContain('swagger-ui');
  });
});

describe('access log', () => {
  it('writes one line per request with its id, and never the body', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).trim().split('\n'));
        done();
      },
    });
    const t = await startTestApp('sqlite', {}, { logStream: sink });
    try {
      await t.http
        .post('/api/databases')
        .set('X-Request-Id', 'audit-42')
        .send({
          database: {
            name: 'pgx',
            engine: 'postgres',
            parameters: postgresParameters({ password: 'hunter2-secret' }),
          },
        })
        .expect(201);
      await new Promise((r) => setTimeout(r, 20));
      const line = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.reqId === 'audit-42');
      expect(line).toMatchObject({
        method: 'POST',
        path: '/api/databases',
        status: 201,
        msg: 'request completed',
      });
      expect(lines.join('\n')).not.toContain('hunter2-secret');
    } finally {
      await t.dispose();
    }
  });
});
