import { problemOf, storeKinds, type TestApp } from '../support/app';
import { ADMIN, login, startAuthApp } from './support';

/** POST /api/users takes the user's name as `name`, or as `username` (the word /api/login uses). */
describe.each(storeKinds)('creating a user on %s', (store) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startAuthApp(store);
    admin = await login(t, ADMIN.name, ADMIN.password);
  });
  afterAll(() => t?.dispose());

  const create = (body: Record<string, unknown>) => t.http.post('/api/users').set('Cookie', admin).send(body);
  const userEvents = async (name: string) =>
    (
      (await t.http.get('/api/events?limit=1000').set('Cookie', admin).expect(200)).body.events as {
        type: string;
        data: { name?: string };
      }[]
    ).filter((e) => e.type === 'UserCreated' && e.data.name === name);

  it('given username instead of name, makes the user, who then signs in with it', async () => {
    const res = await create({
      username: 'ann_by_username',
      password: 'ann-password-1',
      role: 'analyst',
    }).expect(201);
    expect(res.body).toMatchObject({ name: 'ann_by_username', role: 'analyst' });
    expect(await userEvents('ann_by_username')).toHaveLength(1);
    expect(await login(t, 'ann_by_username', 'ann-password-1')).toMatch(/=/);
  });

  it('given name and username alike, makes one user', async () => {
    await create({
      name: 'bob_both',
      username: 'bob_both',
      password: 'bob-password-1',
      role: 'editor',
    }).expect(201);
    expect(await userEvents('bob_both')).toHaveLength(1);
  });

  it('given name and username that differ, answers 400 naming username, and appends nothing', async () => {
    const res = await create({
      name: 'cy_one',
      username: 'cy_two',
      password: 'cy-password-1',
      role: 'editor',
    });
    expect(res.status).toBe(400);
    expect(problemOf(res).detail).toMatch(/username/);
    expect(await userEvents('cy_one')).toHaveLength(0);
    expect(await userEvents('cy_two')).toHaveLength(0);
  });

  it('given neither, answers 400 naming name', async () => {
    const res = await create({ password: 'dee-password-1', role: 'editor' });
    expect(res.status).toBe(400);
    expect(problemOf(res).detail).toMatch(/name/);
  });
});
