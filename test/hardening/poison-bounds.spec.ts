import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';

const nested = (levels: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

const eventCount = async (t: TestApp) =>
  ((await t.http.get('/api/events?limit=10000').expect(200)).body.events as unknown[]).length;

const createSkill = (t: TestApp, name: string, params: Record<string, unknown>) =>
  t.http.post('/api/projects/mindsdb/skills').send({ skill: { name, type: 'custom', params } });

describe.each(storeKinds)('values no event may hold (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t.dispose());

  it('given params nested 3,000 and 4,000 levels deep, then 400 names the limit and the log and every read stay intact', async () => {
    const before = await eventCount(t);
    for (const levels of [65, 3000, 4000]) {
      const res = await createSkill(t, `deep_${levels}`, { p: nested(levels) });
      expect(res.status).toBe(400);
      expect(problemOf(res).detail).toMatch(/nested deeper than 64 levels.*MAX_JSON_DEPTH/);
    }
    expect(await eventCount(t)).toBe(before);
    await t.http.get('/api/projects/mindsdb/skills').expect(200);
  });

  it('given params nested 63 levels, then the skill is stored and every reader of the log answers', async () => {
    const params = { p: nested(62) };
    await createSkill(t, 'deep_ok', params).expect(201);
    const skill = await t.http.get('/api/projects/mindsdb/skills/deep_ok').expect(200);
    expect(skill.body.params).toEqual(params);
    const events = (await t.http.get('/api/events?limit=10000').expect(200)).body.events as {
      type: string;
      data: { name: string; params: unknown };
    }[];
    expect(events.find((e) => e.type === 'SkillCreated' && e.data.name === 'deep_ok')?.data.params).toEqual(
      params,
    );
    // A new process reads the whole log back.
    t = await t.restart({ DUCKDB_FILE: ':memory:' });
    expect((await t.http.get('/api/projects/mindsdb/skills/deep_ok').expect(200)).body.params).toEqual(
      params,
    );
  });

  it('given a NUL character in a key or a value, then 400 names where (PostgreSQL cannot store it)', async () => {
    const before = await eventCount(t);
    const key = await createSkill(t, 'nul_key', { 'a\u0000b': 1 });
    expect(key.status).toBe(400);
    expect(problemOf(key).detail).toBe('params["a\\u0000b"] has a key holding a NUL character');
    const value = await createSkill(t, 'nul_value', { a: { b: 'x\u0000' } });
    expect(value.status).toBe(400);
    expect(problemOf(value).detail).toBe('params.a.b holds a NUL character');
    expect(await eventCount(t)).toBe(before);
  });

  it('given an event larger than MAX_EVENT_BYTES, then 400 names the limit and nothing is written', async () => {
    const before = await eventCount(t);
    const res = await createSkill(t, 'huge', { text: 'x'.repeat(1024 * 1024 + 1) });
    expect(res.status).toBe(400);
    expect(problemOf(res)).toMatchObject({
      title: 'Value out of bounds',
      detail: expect.stringMatching(/larger than 1048576 bytes as JSON \(MAX_EVENT_BYTES\)/),
    });
    expect(await eventCount(t)).toBe(before);
  });
});
