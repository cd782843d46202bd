import { Writable } from 'node:stream';
import { problemOf, startTestApp, type TestApp } from '../support/app';
import { ADMIN, login, startAuthApp } from './support';

describe('with authentication off (the embedded start)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { ALLOWED_HOSTS: 'mindledger.internal' });
  });
  afterAll(() => t?.dispose());

  it.each(['127.0.0.1:47334', 'localhost:47334', 'localhost', '[::1]:47334', '127.1.2.3'])(
    'serves a request addressed to the loopback name %s',
    async (host) => {
      await t.http.get('/api/projects').set('Host', host).expect(200);
    },
  );

  it('refuses any other Host (DNS rebinding) with 403 problem+json saying how to fix it', async () => {
    const res = await t.http.get('/api/projects').set('Host', 'attacker.example:47334').expect(403);
    expect(problemOf(res)).toMatchObject({ title: 'Host not allowed' });
    expect(problemOf(res).detail).toContain('AUTH_USERNAME');
    await t.http.post('/api/sql/query').set('Host', '192.168.1.20').send({ query: 'SELECT 1' }).expect(403);
  });

  it('serves host names listed in ALLOWED_HOSTS, and liveness probes to any host', async () => {
    await t.http.get('/api/projects').set('Host', 'mindledger.internal:47334').expect(200);
    await t.http.get('/api/util/ping').set('Host', '10.0.0.7:47334').expect(200);
  });

  it('reports http_auth_enabled false and needs no credentials', async () => {
    const res = await t.http.get('/api/status').expect(200);
    expect(res.body.auth.http_auth_enabled).toBe(false);
    await t.http.get('/api/projects').expect(200);
  });

  it('records the client address as the actor of what a request does', async () => {
    await t.http
      .post('/api/sql/query')
      .set('X-Request-Id', 'req-off-1')
      .send({ query: 'CREATE PROJECT by_address' });
    const res = await t.http.post('/api/sql/query').send({
      query:
        "SELECT ACTOR, REQUEST_ID, INTERFACE FROM information_schema.EVENTS WHERE REQUEST_ID = 'req-off-1'",
    });
    expect(res.body.data).toEqual([
      [expect.stringMatching(/^address:(::ffff:)?127\.0\.0\.1$/), 'req-off-1', 'sql'],
    ]);
  });

  it('sends security headers (a CSP allowing only its own scripts)', async () => {
    const res = await t.http.get('/api/projects').expect(200);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('serves the API viewer at /doc under that CSP: its scripts are files of its own, none inline', async () => {
    const res = await t.http.get('/doc/').expect(200);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    const scripts = res.text.match(/<script[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toMatch(/src="\.\/[\w.-]+\.js"/);
  });
});

describe('with authentication on: CSRF, CORS, rate limits, logs', () => {
  let t: TestApp;
  let admin: string;
  const logLines: string[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    t = await startAuthApp(
      'sqlite',
      { CORS_ORIGINS: 'https://console.example', LOGIN_RATE_LIMIT: '3', LOG_LEVEL: 'debug' },
      sink,
    );
    admin = await login(t, ADMIN.name, ADMIN.password);
  });
  afterAll(() => t?.dispose());

  const write = (name: string) =>
    t.http
      .post('/api/projects/mindsdb/skills')
      .set('Cookie', admin)
      .send({ skill: { name, type: 't', params: {} } });

  it('serves any Host once authentication is on', async () => {
    await t.http.get('/api/projects').set('Host', 'mindledger.example.com').set('Cookie', admin).expect(200);
  });

  it('refuses a cookie-signed write from another site (Origin, Referer, Sec-Fetch-Site)', async () => {
    const evil = await write('csrf_origin').set('Origin', 'https://evil.example').expect(403);
    expect(problemOf(evil).title).toBe('Cross-site request refused');
    await write('csrf_referer').set('Referer', 'https://evil.example/page').expect(403);
    await write('csrf_null').set('Origin', 'null').expect(403);
    await write('csrf_fetch').set('Sec-Fetch-Site', 'cross-site').expect(403);
  });

  it('takes a cookie-signed write from its own origin, an allowed origin, or a client naming none', async () => {
    await write('same_origin')
      .set('Host', 'mindledger.example:8080')
      .set('Origin', 'http://mindledger.example:8080')
      .expect(201);
    await write('allowed_origin').set('Origin', 'https://console.example').expect(201);
    await write('no_origin').expect(201);
  });

  it('takes a bearer-signed write whatever its Origin (no cookie, no CSRF)', async () => {
    const token = (await t.http.post('/api/tokens').set('Cookie', admin).send({ name: 'bearer' }).expect(201))
      .body.token as string;
    await t.http
      .post('/api/projects/mindsdb/skills')
      .set('Authorization', `Bearer ${token}`)
      .set('Origin', 'https://evil.example')
      .send({ skill: { name: 'by_bearer', type: 't', params: {} } })
      .expect(201);
  });

  it('refuses a login posted from another site', async () => {
    await t.http
      .post('/api/login')
      .set('Origin', 'https://evil.example')
      .send({ username: ADMIN.name, password: ADMIN.password })
      .expect(403);
  });

  it('answers CORS preflights for allowed origins only, with credentials', async () => {
    const ok = await t.http
      .options('/api/projects')
      .set('Origin', 'https://console.example')
      .set('Access-Control-Request-Method', 'POST')
      .expect(204);
    expect(ok.headers['access-control-allow-origin']).toBe('https://console.example');
    expect(ok.headers['access-control-allow-credentials']).toBe('true');
    const other = await t.http
      .options('/api/projects')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('limits failed logins (LOGIN_RATE_LIMIT), then refuses even the right password with 429', async () => {
    for (let i = 0; i < 3; i++)
      await t.http
        .post('/api/login')
        .send({ username: 'guessed', password: `guess-${i}` })
        .expect(401);
    const blocked = await t.http
      .post('/api/login')
      .send({ username: 'guessed', password: 'guess-3' })
      .expect(429);
    expect(problemOf(blocked).title).toBe('Too many login attempts');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    await t.http.post('/api/login').send({ username: ADMIN.name, password: ADMIN.password }).expect(429);
  });

  it('never writes a password to the log', () => {
    const text = logLines.join('');
    expect(text).toContain('request completed');
    expect(text).not.toContain('guess-1');
    expect(text).not.toContain(ADMIN.password);
  });
});

describe('successful logins are not limited', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startAuthApp('sqlite', { LOGIN_RATE_LIMIT: '2' });
  });
  afterAll(() => t?.dispose());

  it('lets the same user sign in more often than the limit', async () => {
    for (let i = 0; i < 5; i++) await login(t, ADMIN.name, ADMIN.password);
  });
});

describe('auth configuration', () => {
  it('refuses AUTH_USERNAME without AUTH_PASSWORD', async () => {
    await expect(startTestApp('sqlite', { AUTH_USERNAME: 'root' })).rejects.toThrow(
      /AUTH_USERNAME and AUTH_PASSWORD/,
    );
  });

  it('resets the bootstrap admin password when AUTH_PASSWORD changes', async () => {
    const t = await startAuthApp('sqlite');
    try {
      const next = await t.restart({ AUTH_PASSWORD: 'a-new-admin-password' });
      await next.http.post('/api/login').send({ username: ADMIN.name, password: ADMIN.password }).expect(401);
      await login(next, ADMIN.name, 'a-new-admin-password');
      await next.dispose();
    } finally {
      await t.dispose();
    }
  });
});
