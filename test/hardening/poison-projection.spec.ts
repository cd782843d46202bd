import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';

type LoggedEvent = { position: number; type: string; data: Record<string, unknown> };

const eventsOf = async (t: TestApp) =>
  (await t.http.get('/api/events?limit=10000').expect(200)).body.events as LoggedEvent[];

/**
 * A valid `FileUploaded` whose bytes exist nowhere: the contract accepts it, but the projection that
 * loads the file cannot apply it (as an event recorded by an older, buggier version might be).
 */
const appendUnprojectableEvent = async (t: TestApp) => {
  const result = await t.running.ctx.log.append(
    'file-lost_bytes',
    [
      {
        type: 'FileUploaded',
        data: {
          name: 'lost_bytes',
          originalName: 'lost.csv',
          digest: 'f'.repeat(64),
          size: 4,
          format: 'csv',
          csv: { delimiter: ',', quote: '"', escape: '"', header: true },
          columns: [{ name: 'a', type: 'VARCHAR' }],
          rowCount: 1,
          uploadedAt: new Date().toISOString(),
        },
      },
    ],
    0n,
  );
  return result.lastPosition;
};

const statusOf = async (t: TestApp) =>
  (await t.http.get('/api/status').expect(200)).body.read_model as {
    position: string;
    failed: {
      position: string | null;
      event_type: string | null;
      projection: string | null;
      error: string;
      attempts: number;
    } | null;
  };

describe.each(storeKinds)('an event no projection can apply (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t.dispose());

  it('given the event in the log, then writes answer 503 with the reason, reads keep working, status names it, and the process restarts', async () => {
    await t.http.post('/api/projects').send({ name: 'before_poison' }).expect(201);
    expect((await statusOf(t)).failed).toBeNull();
    // The runner is held so that the next write is appended before the runner meets the event.
    const held = t.running.ctx.projections.hold();
    const poison = await appendUnprojectableEvent(t);
    const pending = t.http
      .post('/api/projects')
      .send({ name: 'after_poison' })
      .then((r) => r);
    while (!(await eventsOf(t)).some((e) => e.data.name === 'after_poison'))
      await new Promise((r) => setTimeout(r, 5));
    held.release();

    // The write waiting for it: stored (it is in the log), answered 503 at once rather than after 30 s.
    const first = await pending;
    expect(first.status).toBe(503);
    expect(Number(first.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const firstProblem = problemOf(first);
    expect(firstProblem.title).toBe('Read model stopped');
    expect(firstProblem.detail).toContain(`cannot apply event ${poison} (FileUploaded)`);
    expect(firstProblem.detail).toContain('file-tables');
    const stored = (await eventsOf(t)).find((e) => e.data.name === 'after_poison');
    expect(stored).toMatchObject({ type: 'ProjectCreated' });
    expect(firstProblem.detail).toContain(`Stored as event ${stored!.position}`);

    // Status names the event, the projection and why; the tables hold everything before it.
    const status = await statusOf(t);
    expect(status.failed).toMatchObject({
      position: String(poison),
      event_type: 'FileUploaded',
      projection: 'file-tables',
      error: expect.stringMatching(/bytes of file f{64}/),
    });
    expect(status.position).toBe(String(poison - 1n));

    // Later writes are refused before anything is appended.
    const before = (await eventsOf(t)).length;
    const refused = await t.http.post('/api/projects').send({ name: 'refused' });
    expect(refused.status).toBe(503);
    expect(problemOf(refused).detail).toMatch(/^Nothing was written: the read model is stopped/);
    expect(refused.headers['retry-after']).toBeDefined();
    expect((await eventsOf(t)).length).toBe(before);

    // Reads of everything else keep answering.
    const projects = (await t.http.get('/api/projects').expect(200)).body as { name: string }[];
    expect(projects.map((p) => p.name)).toEqual(expect.arrayContaining(['mindsdb', 'before_poison']));
    expect((await querySql(t, 'SELECT name FROM information_schema.databases ORDER BY name')).type).toBe(
      'table',
    );

    // The process starts again, on its own read model and on a fresh one, and reports the same failure.
    for (const overrides of [{}, { DUCKDB_FILE: ':memory:' }] as Record<string, string>[]) {
      t = await t.restart(overrides);
      const again = await statusOf(t);
      expect(again.failed).toMatchObject({ position: String(poison), projection: 'file-tables' });
      expect(again.position).toBe(String(poison - 1n));
      const names = ((await t.http.get('/api/projects').expect(200)).body as { name: string }[]).map(
        (p) => p.name,
      );
      expect(names).toContain('before_poison');
      expect((await t.http.post('/api/projects').send({ name: 'still_refused' })).status).toBe(503);
    }
  });
});

describe.each(storeKinds)('a read model slower than the wait (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { PROJECTION_WAIT_MS: '100' });
  });
  afterAll(async () => t.dispose());

  it('given a held runner, when a project is created, then 202 names the stored event, and reads show it once the runner moves', async () => {
    const held = t.running.ctx.projections.hold();
    let res;
    try {
      res = await t.http.post('/api/projects').send({ name: 'slow_one' });
    } finally {
      held.release();
    }
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      position: expect.stringMatching(/^\d+$/),
      status: 'accepted',
      detail: expect.stringContaining('the read model has not caught up yet'),
    });
    const logged = (await eventsOf(t)).find((e) => e.data.name === 'slow_one');
    expect(logged).toMatchObject({ type: 'ProjectCreated', position: Number(res.body.position) });
    await t.running.ctx.projections.waitFor(BigInt(res.body.position));
    expect((await t.http.get('/api/projects/slow_one').expect(200)).body).toMatchObject({ name: 'slow_one' });
    expect((await statusOf(t)).failed).toBeNull();
  });
});
