import fs from 'node:fs';
import path from 'node:path';
import { problemOf, storeKinds, type TestApp } from '../support/app';
import { ADMIN, login, sqlOver, startAuthApp, userWithRole } from './support';

describe.each(storeKinds)('personal access tokens on %s', (store) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startAuthApp(store);
    admin = await login(t, ADMIN.name, ADMIN.password);
  });
  afterAll(() => t?.dispose());

  const createToken = async (cookie: string, body: Record<string, unknown>) =>
    (await t.http.post('/api/tokens').set('Cookie', cookie).send(body).expect(201)).body as {
      id: string;
      token: string;
      project: string | null;
      expires_at: string | null;
    };

  it('shows a new token once; it then works as a bearer token and lists without its secret', async () => {
    const created = await createToken(admin, { name: 'ci' });
    expect(created.token).toMatch(/^mlt_[A-Za-z0-9_-]{16}_[A-Za-z0-9_-]{43}$/);
    await t.http.get('/api/projects').set('Authorization', `Bearer ${created.token}`).expect(200);
    const listed = await t.http.get('/api/tokens').set('Cookie', admin).expect(200);
    expect(listed.body).toContainEqual(
      expect.objectContaining({ id: created.id, name: 'ci', user: ADMIN.name, project: null }),
    );
    expect(JSON.stringify(listed.body)).not.toContain(created.token.slice(-43));
  });

  it('keeps the clear token out of the log, GET /api/events and the event store', async () => {
    const { token } = await createToken(admin, { name: 'secret-check' });
    const secret = token.slice(-43);
    const events = await t.http.get('/api/events?limit=10000').set('Cookie', admin).expect(200);
    expect(JSON.stringify(events.body)).not.toContain(secret);
    const sql = await sqlOver(t, admin, 'SELECT DATA FROM information_schema.EVENTS');
    expect(JSON.stringify(sql.data)).not.toContain(secret);
    if (store === 'sqlite') {
      const file = fs.readFileSync(path.join(t.config.dataDir, 'events.sqlite'));
      expect(file.includes(Buffer.from(secret))).toBe(false);
      const wal = path.join(t.config.dataDir, 'events.sqlite-wal');
      if (fs.existsSync(wal)) expect(fs.readFileSync(wal).includes(Buffer.from(secret))).toBe(false);
    }
  });

  it('refuses an unknown or altered bearer token with 401 problem+json', async () => {
    const { token } = await createToken(admin, { name: 'altered' });
    const res = await t.http
      .get('/api/projects')
      .set('Authorization', `Bearer ${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)
      .expect(401);
    expect(problemOf(res).title).toBe('Unauthorized');
    await t.http.get('/api/projects').set('Authorization', 'Bearer nonsense').expect(401);
  });

  it('stops a revoked token at once', async () => {
    const { id, token } = await createToken(admin, { name: 'revoked' });
    await t.http.get('/api/projects').set('Authorization', `Bearer ${token}`).expect(200);
    await t.http.delete(`/api/tokens/${id}`).set('Cookie', admin).expect(204);
    await t.http.get('/api/projects').set('Authorization', `Bearer ${token}`).expect(401);
    await t.http.delete(`/api/tokens/${id}`).set('Cookie', admin).expect(404);
  });

  it('stops an expired token', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const { token } = await createToken(admin, { name: 'short', expires_at: expiresAt });
    await t.http.get('/api/projects').set('Authorization', `Bearer ${token}`).expect(200);
    await new Promise((r) => setTimeout(r, 1700));
    await t.http.get('/api/projects').set('Authorization', `Bearer ${token}`).expect(401);
  });

  it("stops a user's tokens when the user is deleted, and lets nobody revoke another's token", async () => {
    const u = await userWithRole(t, admin, 'leaving', 'editor');
    const { id, token } = await createToken(u.cookie, { name: 'mine' });
    const other = await userWithRole(t, admin, 'other_editor', 'editor');
    await t.http.delete(`/api/tokens/${id}`).set('Cookie', other.cookie).expect(404);
    await t.http.get('/api/projects').set('Authorization', `Bearer ${token}`).expect(200);
    await t.http.delete('/api/users/leaving').set('Cookie', admin).expect(204);
    await t.http.get('/api/projects').set('Authorization', `Bearer ${token}`).expect(401);
  });

  it('holds a project-scoped token to its project, over REST and SQL', async () => {
    await sqlOver(t, admin, 'CREATE PROJECT scoped_p');
    await sqlOver(t, admin, 'CREATE PROJECT other_p');
    const { token } = await createToken(admin, { name: 'scoped', project: 'scoped_p' });
    const bearer = `Bearer ${token}`;
    await t.http.get('/api/projects/scoped_p/skills').set('Authorization', bearer).expect(200);
    const refused = await t.http.get('/api/projects/other_p/skills').set('Authorization', bearer).expect(403);
    expect(problemOf(refused).detail).toBe('This token reaches only project scoped_p');
    await t.http.get('/api/databases').set('Authorization', bearer).expect(403);
    // Files are no project's: not an upload's progress either.
    await t.http.get('/api/files/any_name/upload').set('Authorization', bearer).expect(403);
    const ask = (query: string) =>
      t.http
        .post('/api/sql/query')
        .set('Authorization', bearer)
        .send({ query })
        .expect(200)
        .then((r) => r.body as { type: string; error_message?: string });
    expect((await ask('SELECT * FROM scoped_p.models')).type).toBe('table');
    expect(await ask('SELECT * FROM other_p.models')).toMatchObject({
      type: 'error',
      error_message: 'This token reaches only project scoped_p, not other_p',
    });
    expect((await ask('CREATE PROJECT sneaky')).type).toBe('error');
  });
});
