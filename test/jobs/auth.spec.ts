/**
 * A job's statements run as its creator would run them (their role, their token's project), and
 * what they write is recorded as the job's doing (`system:job:<id>`, interface `job`).
 */
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { ADMIN, login, sqlOver, userWithRole } from '../auth/support';
import { manualClock, NO_POLL } from './support';

type LoggedEvent = {
  type: string;
  actor: string | null;
  interface: string | null;
  data: Record<string, unknown>;
};

describe.each(storeKinds)('jobs with sign-in on (%s)', (store) => {
  let t: TestApp;
  let admin: string;
  const time = manualClock('2030-01-01T00:00:00.000Z');
  const events = async (stream: string) =>
    (
      (await t.http.get(`/api/events?stream=${stream}&limit=1000`).set('Cookie', admin).expect(200)).body as {
        events: LoggedEvent[];
      }
    ).events;

  beforeAll(async () => {
    t = await startTestApp(
      store,
      { AUTH_USERNAME: ADMIN.name, AUTH_PASSWORD: ADMIN.password, ...NO_POLL },
      { clock: time.clock },
    );
    admin = await login(t, ADMIN.name, ADMIN.password);
  });
  afterAll(() => t.dispose());

  it("runs an editor's job with the editor's rights, recording the job as the actor", async () => {
    const editor = await userWithRole(t, admin, 'eddie', 'editor');
    expect(
      (await sqlOver(t, editor.cookie, 'CREATE JOB mindsdb.maker (CREATE PROJECT made_by_maker)')).type,
    ).toBe('ok');
    const job = (await t.http.get('/api/projects/mindsdb/jobs/maker').set('Cookie', admin).expect(200))
      .body as {
      id: number;
    };
    await t.running.jobs.tick();
    const created = (await events('project-mindsdb')).find(
      (e) => e.type === 'JobCreated' && e.data.name === 'maker',
    );
    expect(created).toMatchObject({ interface: 'sql', actor: expect.stringMatching(/^user:/) });
    expect(created!.data.owner).toMatchObject({ user: 'eddie', role: 'editor', project: null });
    expect(await events('project-made_by_maker')).toEqual([
      expect.objectContaining({ type: 'ProjectCreated', actor: `system:job:${job.id}`, interface: 'job' }),
    ]);
  });

  it('refuses jobs to the read-only analyst, in SQL and over REST', async () => {
    const analyst = await userWithRole(t, admin, 'anna', 'analyst');
    const answer = await sqlOver(t, analyst.cookie, 'CREATE JOB mindsdb.sneaky (CREATE PROJECT by_analyst)');
    expect(answer).toMatchObject({
      type: 'error',
      error_message: expect.stringMatching(/analyst role is read-only/),
    });
    await t.http
      .post('/api/projects/mindsdb/jobs')
      .set('Cookie', analyst.cookie)
      .send({ job: { name: 'sneaky', query: 'CREATE PROJECT by_analyst' } })
      .expect(403);
  });

  it("holds a project-scoped token's job to what that token may run", async () => {
    await sqlOver(t, admin, 'CREATE PROJECT scoped');
    const { token } = (
      await t.http
        .post('/api/tokens')
        .set('Cookie', admin)
        .send({ name: 'scoped', project: 'scoped' })
        .expect(201)
    ).body as { token: string };
    await t.http
      .post('/api/projects/scoped/jobs')
      .set('Authorization', `Bearer ${token}`)
      .send({ job: { name: 'escape', query: 'CREATE PROJECT escaped' } })
      .expect(200);
    await t.running.jobs.tick();
    const history = (
      await t.http.get('/api/projects/scoped/jobs/escape/history').set('Cookie', admin).expect(200)
    ).body as { status: string; error: string | null }[];
    expect(history).toEqual([
      expect.objectContaining({ status: 'failed', error: expect.stringMatching(/project-scoped token/) }),
    ]);
    expect(await events('project-escaped')).toEqual([]);
  });
});
