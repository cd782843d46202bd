/**
 * A lone UTF-16 surrogate is no Unicode text: DuckDB's JSON reader and PostgreSQL's jsonb refuse it.
 * Once one was accepted into the log, no read model could project it and every later write waited
 * behind it, through restarts. Each reproduction of the attacker's probe is refused with a 400 (or a
 * SQL error) naming where, and writes go on.
 */
import sqlite3 from 'sqlite3';
import path from 'node:path';
import { ADMIN, login, userWithRole } from '../auth/support';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';

const LONE = '\ud800';

const eventCount = async (t: TestApp, cookie: string) =>
  ((await t.http.get('/api/events?limit=10000').set('Cookie', cookie).expect(200)).body.events as unknown[])
    .length;

/** Writes still go through and the read model is at the log's head. */
const stillWriting = async (t: TestApp, cookie: string, name: string) => {
  await t.http
    .post('/api/projects/mindsdb/skills')
    .set('Cookie', cookie)
    .send({ skill: { name, type: 'custom', params: {} } })
    .expect(201);
  const ready = await t.http.get('/api/ready').expect(200);
  expect(ready.body).toMatchObject({ status: 'ready' });
};

describe.each(storeKinds)('a lone surrogate in any string (%s)', (kind) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp(kind, { AUTH_USERNAME: ADMIN.name, AUTH_PASSWORD: ADMIN.password });
    admin = await login(t, ADMIN.name, ADMIN.password);
    await t.http
      .post('/api/projects/mindsdb/skills')
      .set('Cookie', admin)
      .send({ skill: { name: 'x', type: 'custom', params: {} } })
      .expect(201);
  });
  afterAll(async () => t.dispose());

  it('given the lowest role naming a token with one, then 400 names the field and nothing is written', async () => {
    const auditor = await userWithRole(t, admin, 'audrey', 'auditor');
    const before = await eventCount(t, admin);
    const res = await t.http.post('/api/tokens').set('Cookie', auditor.cookie).send({ name: LONE });
    expect(res.status).toBe(400);
    expect(problemOf(res).detail).toMatch(/name holds a lone UTF-16 surrogate/);
    expect(await eventCount(t, admin)).toBe(before);
    await stillWriting(t, admin, 'after_token');
  });

  it.each([
    [
      'a skill type',
      'post',
      '/api/projects/mindsdb/skills',
      { skill: { name: 'e', type: LONE, params: {} } },
    ],
    [
      'a skill param key',
      'post',
      '/api/projects/mindsdb/skills',
      { skill: { name: 'e', type: 'c', params: { [`k${LONE}`]: 1 } } },
    ],
    ['a skill name on update', 'put', '/api/projects/mindsdb/skills/x', { skill: { name: LONE } }],
    [
      'an agent name',
      'post',
      '/api/projects/mindsdb/agents',
      { agent: { name: `a${LONE}b`, model: { model_name: 'm' } } },
    ],
  ] as const)(
    'given %s holding one, then 400 names where and writes go on',
    async (what, method, url, body) => {
      const before = await eventCount(t, admin);
      const res = await t.http[method](url).set('Cookie', admin).send(body);
      expect(res.status).toBe(400);
      expect(problemOf(res).detail).toMatch(/lone UTF-16 surrogate|surrogate/);
      expect(await eventCount(t, admin)).toBe(before);
      await stillWriting(t, admin, `after_${what.replace(/\W+/g, '_')}`);
    },
  );

  it.each([
    ['a view', `CREATE VIEW mindsdb.v AS (SELECT '${LONE}' AS a)`],
    ['a job', `CREATE JOB mindsdb.j (SELECT '${LONE}' AS a) EVERY hour`],
    ['a skill made in SQL', `CREATE SKILL mindsdb.s USING type='${LONE}'`],
  ])('given %s whose SQL text holds one, then a SQL error says so and writes go on', async (what, sql) => {
    const before = await eventCount(t, admin);
    const answer = (await t.http.post('/api/sql/query').set('Cookie', admin).send({ query: sql }).expect(200))
      .body as { type: string; error_code?: number; error_message?: string };
    expect(answer).toMatchObject({ type: 'error', error_message: expect.stringMatching(/surrogate/) });
    expect(answer.error_code).not.toBe(1105);
    expect(await eventCount(t, admin)).toBe(before);
    await stillWriting(t, admin, `after_sql_${what.replace(/\W+/g, '_')}`);
  });

  it('given a surrogate pair (an emoji) and every other plane, then it is stored and read back as sent', async () => {
    const name = 'emoji_\ud83d\ude00_\u{10FFFF}_\uFFFE_\u200F';
    await t.http
      .post('/api/projects/mindsdb/skills')
      .set('Cookie', admin)
      .send({ skill: { name: 'emoji', type: name, params: { [name]: name } } })
      .expect(201);
    const skill = await t.http.get('/api/projects/mindsdb/skills/emoji').set('Cookie', admin).expect(200);
    expect(skill.body).toMatchObject({ type: name, params: { [name]: name } });
  });
});

describe('a log written before lone surrogates were refused (sqlite)', () => {
  it('given a stored event holding one, then the read model projects it with U+FFFD and writes go on', async () => {
    let t = await startTestApp('sqlite');
    try {
      await t.http
        .post('/api/projects/mindsdb/skills')
        .send({ skill: { name: 'old', type: 'custom', params: {} } })
        .expect(201);
      await t.stop();
      // As an older version stored it: Emmett writes JSON.stringify's text, which escapes the surrogate.
      const file = path.join(t.config.dataDir, 'events.sqlite');
      const db = new sqlite3.Database(file);
      await new Promise<void>((resolve, reject) =>
        db.run(
          `UPDATE emt_messages SET message_data = replace(message_data, ?, ?) WHERE message_type = 'SkillCreated'`,
          ['"custom"', '"bad\\ud800type"'],
          (error) => (error ? reject(error) : resolve()),
        ),
      );
      const stored = await new Promise<string>((resolve, reject) =>
        db.get<{ d: string }>(
          `SELECT message_data AS d FROM emt_messages WHERE message_type = 'SkillCreated'`,
          (error, row) => (error ? reject(error) : resolve(row!.d)),
        ),
      );
      await new Promise<void>((resolve) => db.close(() => resolve()));
      expect(stored).toContain('"bad\\ud800type"');
      t = await t.restart({ DUCKDB_FILE: ':memory:' });
      const skill = await t.http.get('/api/projects/mindsdb/skills/old').expect(200);
      expect(skill.body.type).toBe('bad\ufffdtype');
      await t.http
        .post('/api/projects/mindsdb/skills')
        .send({ skill: { name: 'new', type: 'custom', params: {} } })
        .expect(201);
      await t.http.get('/api/ready').expect(200);
    } finally {
      await t.dispose();
    }
  });
});
