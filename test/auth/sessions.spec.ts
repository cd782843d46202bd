import { problemOf, storeKinds, type TestApp } from '../support/app';
import { ADMIN, login, startAuthApp, userWithRole } from './support';

describe.each(storeKinds)('sign-in and sessions on %s', (store) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startAuthApp(store);
    admin = await login(t, ADMIN.name, ADMIN.password);
  });
  afterAll(() => t?.dispose());

  it('reports http_auth_enabled in /api/status, which stays open', async () => {
    const res = await t.http.get('/api/status').expect(200);
    expect(res.body.auth).toEqual({ http_auth_enabled: true, confirmed: true, provider: 'mindledger' });
  });

  it('answers 401 problem+json without a session or token', async () => {
    const res = await t.http.get('/api/projects').expect(401);
    expect(problemOf(res)).toMatchObject({
      title: 'Unauthorized',
      detail: 'Authorization is required to complete the request',
    });
  });

  it('sets an httpOnly, SameSite=Lax session cookie on login and answers {}', async () => {
    const res = await t.http
      .post('/api/login')
      .send({ username: ADMIN.name, password: ADMIN.password })
      .expect(200);
    expect(res.body).toEqual({});
    const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!;
    expect(cookie).toMatch(/^mindledger_session=[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/');
    expect(cookie).not.toContain('Secure');
    await t.http.get('/api/projects').set('Cookie', cookie.split(';')[0]!).expect(200);
  });

  it('refuses a wrong password (401) and a body without strings (400), as MindsDB words them', async () => {
    const wrong = await t.http
      .post('/api/login')
      .send({ username: ADMIN.name, password: 'nope' })
      .expect(401);
    expect(problemOf(wrong)).toMatchObject({ title: 'Unauthorized', detail: 'Invalid username or password' });
    const unknown = await t.http.post('/api/login').send({ username: 'ghost', password: 'nope' }).expect(401);
    expect(problemOf(unknown).detail).toBe('Invalid username or password');
    const bad = await t.http.post('/api/login').send({ username: 1, password: [] }).expect(400);
    expect(problemOf(bad).detail).toBe('Error in username or password');
  });

  it('answers /api/me with the signed-in user and role', async () => {
    const res = await t.http.get('/api/me').set('Cookie', admin).expect(200);
    expect(res.body).toEqual({
      http_auth_enabled: true,
      user: ADMIN.name,
      role: 'admin',
      project: null,
      via: 'session',
    });
  });

  it('ends the session on logout: the cookie no longer works', async () => {
    const cookie = await login(t, ADMIN.name, ADMIN.password);
    const res = await t.http.post('/api/logout').set('Cookie', cookie).expect(200);
    expect(res.text).toBe('');
    expect(([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]).toMatch(/Max-Age=0/);
    await t.http.get('/api/projects').set('Cookie', cookie).expect(401);
  });

  it('refuses a forged session cookie', async () => {
    const [id] = admin.split('=')[1]!.split('.');
    await t.http
      .get('/api/projects')
      .set('Cookie', `mindledger_session=${id}.${'A'.repeat(43)}`)
      .expect(401);
  });

  it("revokes a user's sessions when the password changes, and when the user is deleted", async () => {
    const u = await userWithRole(t, admin, 'changing', 'editor');
    await t.http
      .put('/api/users/changing')
      .set('Cookie', admin)
      .send({ password: 'another-password' })
      .expect(200);
    await t.http.get('/api/projects').set('Cookie', u.cookie).expect(401);
    const again = await login(t, 'changing', 'another-password');
    await t.http.get('/api/projects').set('Cookie', again).expect(200);
    await t.http.delete('/api/users/changing').set('Cookie', admin).expect(204);
    await t.http.get('/api/projects').set('Cookie', again).expect(401);
    const rows = await t.running.ctx.duck.query(
      "SELECT END_REASON FROM sessions WHERE USER_NAME = 'changing' ORDER BY STARTED_AT",
    );
    expect(rows.map((r) => r.END_REASON)).toEqual(['revoked', 'revoked']);
  });

  it('keeps the last admin (deleting or demoting it: 409)', async () => {
    await t.http.delete(`/api/users/${ADMIN.name}`).set('Cookie', admin).expect(409);
    await t.http.put(`/api/users/${ADMIN.name}`).set('Cookie', admin).send({ role: 'analyst' }).expect(409);
  });

  it('never stores a password: the log holds scrypt hashes only, and those sealed', async () => {
    await userWithRole(t, admin, 'hashed', 'analyst');
    const asText = (events: unknown) =>
      JSON.stringify(events, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    const stored = asText(await t.running.ctx.log.readPage({ after: 0n, limit: 10_000, stream: 'users' }));
    const readBack = asText((await t.running.ctx.log.readStream('users', 0n)).events);
    for (const text of [stored, readBack]) {
      expect(text).not.toContain('hashed-password');
      expect(text).not.toContain(ADMIN.password);
    }
    // As stored, even the hashes are sealed (secrets by the rule, like any other); read back, they open.
    expect(stored).not.toMatch(/scrypt\$/);
    expect(stored).toMatch(/"passwordHash":"enc:v1:/);
    expect(readBack).toMatch(/scrypt\$16384\$8\$1\$/);
  });

  it('keeps sessions across a restart (the session is in the log)', async () => {
    const cookie = await login(t, ADMIN.name, ADMIN.password);
    t = await t.restart();
    await t.http.get('/api/projects').set('Cookie', cookie).expect(200);
    admin = cookie;
  });
});
