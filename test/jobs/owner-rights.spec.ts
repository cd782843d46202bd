/**
 * A job (and a trigger) runs as its owner is now, not as they were when it was made: an editor's
 * `CREATE JOB … (INSERT INTO extpg.t …)` kept writing after DELETE /api/users/<editor>. At every run
 * the owner is looked up in the users' current state (src/users/owners.ts): gone, their token
 * revoked or expired → the run fails with the reason, nothing run; demoted → statements run with
 * the lower role, and a refused one says the owner was demoted.
 */
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app';
import { ADMIN, login, sqlOver, userWithRole } from '../auth/support';
import { freshPostgresData, postgresParameters } from '../support/external';
import { uniqueName } from '../support/world';
import { manualClock, NO_POLL } from './support';

type Source = Awaited<ReturnType<typeof freshPostgresData>>;
type Run = { status: string; error: string | null };

const inSource = async (source: Source, sql: string) => {
  const c = new pg.Client(postgresParameters({ database: source.name }));
  await c.connect();
  try {
    return (await c.query({ text: sql, rowMode: 'array' })).rows as unknown[][];
  } finally {
    await c.end();
  }
};

describe('jobs and triggers run as their owner is now (sqlite)', () => {
  let t: TestApp;
  let admin: string;
  let source: Source;
  const time = manualClock('2030-01-01T00:00:00.000Z');
  const history = async (job: string) =>
    (await t.http.get(`/api/projects/pb/jobs/${job}/history`).set('Cookie', admin).expect(200)).body as Run[];
  /** A table of the test's own in the source, which its job or trigger writes to. */
  const givenTable = async () => {
    const table = uniqueName('t');
    await inSource(source, `CREATE TABLE ${table} (n int)`);
    return table;
  };
  const written = async (table: string) =>
    Number((await inSource(source, `SELECT count(*)::int FROM ${table}`))[0]![0]);

  beforeAll(async () => {
    t = await startTestApp(
      'sqlite',
      { AUTH_USERNAME: ADMIN.name, AUTH_PASSWORD: ADMIN.password, ...NO_POLL },
      { clock: time.clock },
    );
    admin = await login(t, ADMIN.name, ADMIN.password);
    source = await freshPostgresData([]);
    expect((await sqlOver(t, admin, 'CREATE PROJECT pb')).type).toBe('ok');
    await t.http
      .post('/api/databases')
      .set('Cookie', admin)
      .send({ database: { name: 'extpg', engine: 'postgres', parameters: source.parameters } })
      .expect(201);
  });
  afterAll(async () => {
    await t?.dispose();
    await source?.drop();
  });

  const nextHour = async () => {
    time.advance(3_600_000);
    await t.running.jobs.tick();
  };

  it('fails the job of a deleted owner with the reason, and writes nothing', async () => {
    const table = await givenTable();
    const editor = await userWithRole(t, admin, 'editor2', 'editor');
    expect(
      (
        await sqlOver(
          t,
          editor.cookie,
          `CREATE JOB pb.j (INSERT INTO extpg.${table} (SELECT 1 AS n)) EVERY hour`,
        )
      ).type,
    ).toBe('ok');
    await t.running.jobs.tick();
    expect(await written(table)).toBe(1);
    await t.http.delete('/api/users/editor2').set('Cookie', admin).expect(204);
    await nextHour();
    expect((await history('j')).map((r) => [r.status, r.error])).toEqual([
      ['finished', null],
      ['failed', "the job's owner editor2 no longer exists"],
    ]);
    expect(await written(table)).toBe(1);
    // A new user of the same name is not the owner.
    await userWithRole(t, admin, 'editor2', 'editor');
    await nextHour();
    expect((await history('j')).at(-1)).toMatchObject({ status: 'failed', error: /no longer exists/ });
    expect(await written(table)).toBe(1);
    await sqlOver(t, admin, 'DROP JOB pb.j');
  });

  it("runs a demoted owner's jobs with the lower role: a write fails, a SELECT still runs", async () => {
    const table = await givenTable();
    const editor = await userWithRole(t, admin, 'editor3', 'editor');
    expect(
      (
        await sqlOver(
          t,
          editor.cookie,
          `CREATE JOB pb.w (INSERT INTO extpg.${table} (SELECT 2 AS n)) EVERY hour`,
        )
      ).type,
    ).toBe('ok');
    expect((await sqlOver(t, editor.cookie, 'CREATE JOB pb.r (SELECT 1) EVERY hour')).type).toBe('ok');
    const before = await written(table);
    await t.http.put('/api/users/editor3').set('Cookie', admin).send({ role: 'analyst' }).expect(200);
    await nextHour();
    expect((await history('w')).at(-1)).toEqual(
      expect.objectContaining({
        status: 'failed',
        error: expect.stringMatching(
          /^the job's owner editor3 is now analyst: The analyst role is read-only/,
        ),
      }),
    );
    expect(await written(table)).toBe(before);
    expect((await history('r')).at(-1)).toMatchObject({ status: 'finished', error: null });
    // Promoted again, the job has back the rights it was made with (never more).
    await t.http.put('/api/users/editor3').set('Cookie', admin).send({ role: 'admin' }).expect(200);
    await nextHour();
    expect((await history('w')).at(-1)).toMatchObject({ status: 'finished', error: null });
    expect(await written(table)).toBe(before + 1);
    await sqlOver(t, admin, 'DROP JOB pb.w');
    await sqlOver(t, admin, 'DROP JOB pb.r');
  });

  it('fails the job of a revoked token', async () => {
    const table = await givenTable();
    const editor = await userWithRole(t, admin, 'editor4', 'editor');
    const { id, token } = (
      await t.http.post('/api/tokens').set('Cookie', editor.cookie).send({ name: 'ci' }).expect(201)
    ).body as { id: string; token: string };
    const answer = await t.http
      .post('/api/sql/query')
      .set('Authorization', `Bearer ${token}`)
      .send({ query: `CREATE JOB pb.k (INSERT INTO extpg.${table} (SELECT 3 AS n)) EVERY hour` })
      .expect(200);
    expect(answer.body).toMatchObject({ type: 'ok' });
    await nextHour();
    const before = await written(table);
    await t.http.delete(`/api/tokens/${id}`).set('Cookie', editor.cookie).expect(204);
    await nextHour();
    expect((await history('k')).at(-1)).toEqual(
      expect.objectContaining({
        status: 'failed',
        error: "the job's owner editor4: the access token it was made with was revoked",
      }),
    );
    expect(await written(table)).toBe(before);
    await sqlOver(t, admin, 'DROP JOB pb.k');
  });

  it("fails a deleted owner's trigger firing with the reason, and writes nothing", async () => {
    const table = await givenTable();
    await inSource(source, 'CREATE TABLE orders (id int)');
    const editor = await userWithRole(t, admin, 'editor5', 'editor');
    expect(
      (
        await sqlOver(
          t,
          editor.cookie,
          `CREATE TRIGGER pb.copy ON extpg.orders (INSERT INTO extpg.${table} (SELECT id AS n FROM TABLE_DELTA))`,
        )
      ).type,
    ).toBe('ok');
    await t.http.delete('/api/users/editor5').set('Cookie', admin).expect(204);
    const before = await written(table);
    await inSource(source, 'INSERT INTO orders VALUES (7)');
    await t.running.triggers.tick();
    expect(await written(table)).toBe(before);
    const shown = await sqlOver(
      t,
      admin,
      "SELECT LAST_ERROR FROM information_schema.TRIGGERS WHERE NAME = 'copy'",
    );
    expect(shown.data).toEqual([["the trigger's owner editor5 no longer exists"]]);
  });
});
