/**
 * Who reaches the operator's routes: load balancers and Prometheus carry no credentials, so the
 * probes and the metrics are open like /api/status; with authentication off, the probes also
 * answer whatever Host they are addressed to (a pod's name), the metrics only listed ones.
 */
import { ADMIN, startAuthApp } from '../auth/support';
import { problemOf, startTestApp, type TestApp } from '../support/app';
import { parseExposition } from './exposition';

describe('with authentication on', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startAuthApp('sqlite');
  });
  afterAll(async () => t.dispose());

  it('answers the probes and the metrics without credentials, and nothing else', async () => {
    expect((await t.http.get('/api/health').expect(200)).body).toEqual({ status: 'ok' });
    expect((await t.http.get('/api/ready').expect(200)).body).toMatchObject({ status: 'ready', lag: 0 });
    const metrics = await t.http.get('/api/metrics').expect(200);
    expect(parseExposition(metrics.text).some((s) => s.name === 'mindledger_commands_total')).toBe(true);
    expect(problemOf(await t.http.get('/api/projects').expect(401)).title).toBe('Unauthorized');
  });

  it('never shows a name, a secret or a path in the metrics: route patterns and numbers only', async () => {
    const text = (await t.http.get('/api/metrics').expect(200)).text;
    expect(text).not.toContain(ADMIN.password);
    expect(text).not.toContain(ADMIN.name);
    expect(text).not.toContain(t.config.dataDir);
  });
});

describe('with authentication off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { ALLOWED_HOSTS: 'prometheus-target' });
  });
  afterAll(async () => t.dispose());

  it('answers the probes addressed to any host name (a container name), as /api/util/ping', async () => {
    for (const path of ['/api/health', '/api/ready', '/api/util/ping'])
      expect((await t.http.get(path).set('Host', 'api1:47334').expect(200)).body.status).toMatch(
        /^(ok|ready)$/,
      );
  });

  it('holds the metrics to the Host check, as /api/status: served to ALLOWED_HOSTS, refused elsewhere', async () => {
    await t.http.get('/api/metrics').set('Host', 'prometheus-target:47334').expect(200);
    const refused = await t.http.get('/api/metrics').set('Host', 'elsewhere.example:47334').expect(403);
    expect(problemOf(refused).title).toBe('Host not allowed');
    await t.http.get('/api/status').set('Host', 'elsewhere.example:47334').expect(403);
  });
});
