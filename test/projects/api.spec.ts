import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, givenProject, onFreshApp, uniqueName } from '../support/world';

describe.each(storeKinds)('projects API on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t.dispose());

  it('has the default project mindsdb from the first start, created by one event', () =>
    onFreshApp(store, async (fresh) => {
      const res = await fresh.http.get('/api/projects').expect(200);
      expect(res.body).toEqual([
        {
          id: expect.any(Number),
          name: 'mindsdb',
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/),
        },
      ]);
      const log = await fresh.http.get('/api/events?stream=project-mindsdb').expect(200);
      expect(log.body.events.map((e: { type: string }) => e.type)).toEqual(['ProjectCreated']);
    }));

  it('creates a project (201) in MindsDB shape, its id as ETag', async () => {
    const created = await t.http.post('/api/projects').send({ name: 'Sales_2026' }).expect(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'Sales_2026',
      created_at: expect.any(String),
    });
    expect(created.headers.etag).toBe(`"${created.body.id}"`);
  });

  it('reads a project by name case-insensitively, with or without trailing slash', async () => {
    const created = await givenProject(t, uniqueName('Read_Me'));
    const byName = await t.http.get(`/api/projects/${created.name.toLowerCase()}/`).expect(200);
    expect(byName.body).toEqual(created);
    expect(byName.headers.etag).toBe(`"${created.id}"`);
    const exact = await t.http.get(`/api/projects/${created.name}`).expect(200);
    expect(exact.body).toEqual(created);
  });

  it('lists mindsdb first, then projects in the order they were created', () =>
    onFreshApp(store, async (fresh) => {
      const created = await givenProject(fresh, 'Sales_2026');
      const list = await fresh.http.get('/api/projects/').expect(200);
      expect(list.body.map((p: { name: string }) => p.name)).toEqual(['mindsdb', created.name]);
    }));

  it('deletes a project by name in any case (204, empty); it is 404 afterwards', async () => {
    const created = await givenProject(t, uniqueName('Doomed'));
    const gone = await t.http.delete(`/api/projects/${created.name.toUpperCase()}`).expect(204);
    expect(gone.text).toBe('');
    const lower = created.name.toLowerCase();
    const missing = await t.http.get(`/api/projects/${lower}`).expect(404);
    expect(problemOf(missing)).toEqual({
      title: 'Project not found',
      detail: `Project name ${lower} does not exist`,
      status: 404,
    });
  });

  it('refuses duplicate names regardless of case', async () => {
    await t.http.post('/api/projects').send({ name: 'dup' }).expect(201);
    const again = await t.http.post('/api/projects').send({ name: 'DUP' }).expect(409);
    expect(problemOf(again).detail).toMatch(/already exists/);
  });

  it.each([
    ['1abc', /must not start with a digit/],
    ['has-dash', /only letters, digits and underscores/],
    ['a'.repeat(64), /at most 63 characters/],
    ['', /must not be empty/],
  ])('rejects the project name %j with a 400 that names the field', async (name, why) => {
    const res = await t.http.post('/api/projects').send({ name }).expect(400);
    const p = problemOf(res);
    expect(p.status).toBe(400);
    expect(p.detail).toMatch(/^body\.name: /);
    expect(p.detail).toMatch(why);
  });

  it('refuses to delete mindsdb (400)', async () => {
    expect(problemOf(await t.http.delete('/api/projects/mindsdb').expect(400)).detail).toMatch(
      /cannot be deleted/,
    );
  });

  it('answers 404 when deleting an unknown project', async () => {
    expect(problemOf(await t.http.delete('/api/projects/nope').expect(404)).detail).toMatch(/does not exist/);
  });

  it('refuses reserved names (409)', async () => {
    expect(problemOf(await t.http.post('/api/projects').send({ name: 'files' }).expect(409)).detail).toMatch(
      /system/,
    );
  });

  it('checks If-Match on delete: stale is 412 and changes nothing', async () => {
    const created = await t.http.post('/api/projects').send({ name: 'guarded' }).expect(201);
    const stale = await t.http.delete('/api/projects/guarded').set('If-Match', '"1"').expect(412);
    expect(problemOf(stale).detail).toMatch(/not 1/);
    await t.http.get('/api/projects/guarded').expect(200);
    await t.http.delete('/api/projects/guarded').set('If-Match', created.headers.etag!).expect(204);
  });

  it('serialises concurrent creates of one name: exactly one wins, nothing is duplicated', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, () => t.http.post('/api/projects').send({ name: 'racer' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(11).fill(409)]);
    expect(await eventsOf(t, 'project-racer')).toHaveLength(1);
  });

  it('loses no concurrent creates of different names', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `many_${i}`);
    const results = await Promise.all(names.map((name) => t.http.post('/api/projects').send({ name })));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const list = await t.http.get('/api/projects').expect(200);
    const listed = list.body.map((p: { name: string }) => p.name);
    for (const n of names) expect(listed).toContain(n);
  });
});
