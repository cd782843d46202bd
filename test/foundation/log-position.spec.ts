import { problemOf, startPostgresCluster, startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenProject, uniqueName } from '../support/world';

const skill = (name: string, value: string) => ({
  skill: { name, type: 'text2sql', params: { database: 'files', description: value } },
});

/** The position of the last event of a stream, as GET /api/events shows it. */
const lastPositionOf = async (t: TestApp, stream: string) => {
  const events = (await t.http.get(`/api/events?stream=${stream}&limit=1000`).expect(200)).body.events as {
    position: number;
  }[];
  return String(events.at(-1)?.position);
};

describe.each(storeKinds)('X-Log-Position on the answers of writes (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.dispose());

  it('given REST writes, when each answers, then it names the position of the last event it appended', async () => {
    const project = uniqueName('lp');
    const created = await t.http.post('/api/projects').send({ name: project }).expect(201);
    expect(created.headers['x-log-position']).toMatch(/^[1-9][0-9]*$/);
    expect(created.headers['x-log-position']).toBe(await lastPositionOf(t, `project-${project}`));

    const skillCreated = await t.http
      .post(`/api/projects/${project}/skills`)
      .send(skill('s', 'one'))
      .expect(201);
    const updated = await t.http.put(`/api/projects/${project}/skills/s`).send(skill('s', 'two')).expect(200);
    expect(updated.headers['x-log-position']).toBe(await lastPositionOf(t, `project-${project}`));
    expect(BigInt(updated.headers['x-log-position']!)).toBeGreaterThan(
      BigInt(skillCreated.headers['x-log-position']!),
    );

    const deleted = await t.http.delete(`/api/projects/${project}/skills/s`).expect(204);
    expect(deleted.headers['x-log-position']).toBe(await lastPositionOf(t, `project-${project}`));
  });

  it('given a SQL statement that writes, when it answers, then it names the position; a SELECT does not', async () => {
    const { name: project } = await givenProject(t, uniqueName('lp'));

    const write = await t.http
      .post('/api/sql/query')
      .send({
        query: `CREATE SKILL ${project}.by_sql USING type = 'text2sql', database = 'files', description = 'x'`,
      })
      .expect(200);
    expect(write.body.type).toBe('ok');
    expect(write.headers['x-log-position']).toBe(await lastPositionOf(t, `project-${project}`));

    const read = await t.http
      .post('/api/sql/query')
      .send({ query: `SELECT name FROM ${project}.skills` })
      .expect(200);
    expect(read.body.type).toBe('table');
    expect(read.headers['x-log-position']).toBeUndefined();
  });

  it('given requests that append nothing, when they answer, then no X-Log-Position', async () => {
    const { name: project } = await givenProject(t, uniqueName('lp'));
    await t.http.post(`/api/projects/${project}/skills`).send(skill('s', 'one')).expect(201);

    const reads = [
      await t.http.get('/api/projects').expect(200),
      await t.http.get(`/api/projects/${project}/skills`).expect(200),
      await t.http.get('/api/status').expect(200),
      // Refused by the decider: nothing was appended.
      await t.http.post('/api/projects').send({ name: project }).expect(409),
      await t.http.get('/api/projects/nope').expect(404),
    ];
    for (const answer of reads) expect(answer.headers['x-log-position']).toBeUndefined();
  });
});

describe('X-Min-Log-Position and ?min_position= (sqlite: one process)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { READ_MIN_POSITION_WAIT_MS: '300', PROJECTION_WAIT_MS: '200' });
  });
  afterAll(() => t.dispose());

  it.each(['abc', '-1', '1.5', '1e3', '', '99999999999999999999', '9223372036854775808', '5, 7'])(
    'given the header %j, when a GET asks with it, then 400 naming the header',
    async (value) => {
      const res = await t.http.get('/api/projects').set('X-Min-Log-Position', value).expect(400);
      expect(problemOf(res)).toEqual({
        title: 'Invalid X-Min-Log-Position',
        detail: expect.stringContaining('X-Min-Log-Position must be a log position'),
        status: 400,
      });
    },
  );

  it('given a malformed ?min_position=, when a GET asks with it, then 400 naming the parameter', async () => {
    const res = await t.http.get('/api/projects?min_position=soon').expect(400);
    expect(problemOf(res)).toMatchObject({
      title: 'Invalid min_position (query parameter)',
      detail: expect.stringContaining('"soon"'),
    });
    await t.http.get('/api/projects?min_position=1&min_position=2').expect(400);
  });

  it('given a position the read model includes (or 0), when a GET or a SQL query asks for it, then it answers at once', async () => {
    const created = await t.http.post('/api/projects').send({ name: 'seen' }).expect(201);
    const position = created.headers['x-log-position']!;
    await t.http.get('/api/projects/seen').set('X-Min-Log-Position', position).expect(200);
    await t.http.get(`/api/projects/seen?min_position=${position}`).expect(200);
    await t.http.get('/api/projects/seen').set('X-Min-Log-Position', '0').expect(200);
    const answer = await t.http
      .post('/api/sql/query')
      .set('X-Min-Log-Position', position)
      .send({ query: `SELECT name FROM information_schema.databases WHERE name = 'seen'` })
      .expect(200);
    expect(answer.body.data).toEqual([['seen']]);
  });

  it('given a read model held behind a write, when the write answers 202, then X-Log-Position names the position its body names', async () => {
    await t.http.post('/api/projects').send({ name: 'accepting' }).expect(201);
    await t.http.get('/api/projects/accepting').expect(200);
    const hold = t.running.ctx.projections.hold();
    try {
      // An agent's answer is its projected row: it waits for the read model, and past the wait 202.
      const accepted = await t.http
        .post('/api/projects/accepting/agents')
        .send({ agent: { name: 'accepted' } })
        .expect(202);
      expect(accepted.body.status).toBe('accepted');
      expect(accepted.headers['x-log-position']).toBe(accepted.body.position);
      hold.release();
      await t.running.ctx.projections.waitFor(BigInt(accepted.body.position as string));
    } finally {
      hold.release();
    }
  });

  it('given a position beyond the log, when a GET or a SQL query asks for it, then 503 with Retry-After naming both positions', async () => {
    const reached = t.running.ctx.projections.highestApplied;
    const asked = (reached + 1000n).toString();
    const started = Date.now();
    const res = await t.http.get('/api/projects').set('X-Min-Log-Position', asked).expect(503);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(res.headers['retry-after']).toBe('1');
    expect(problemOf(res)).toEqual({
      title: 'Read model behind',
      detail: expect.stringContaining(`has not reached log position ${asked}`),
      status: 503,
    });
    expect(res.body.detail).toContain(`it has reached position ${reached}`);
    expect(res.body.detail).toContain('READ_MIN_POSITION_WAIT_MS');

    const sql = await t.http
      .post('/api/sql/query')
      .query({ min_position: asked })
      .send({ query: 'SELECT 1' })
      .expect(503);
    expect(problemOf(sql).title).toBe('Read model behind');
  });
});

describe('X-Min-Log-Position across two processes on one PostgreSQL log', () => {
  let cluster: Awaited<ReturnType<typeof startPostgresCluster>>;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    // No polling to speak of: only the log's notifications and the wait itself bring B along.
    cluster = await startPostgresCluster(2, {
      env: { PROJECTION_POLL_MS: '60000', READ_MIN_POSITION_WAIT_MS: '2000' },
    });
    [a, b] = cluster.apps as [TestApp, TestApp];
  });
  afterAll(() => cluster.dispose());

  it('given a write on A and B held behind it, when B is asked for its position, then 503 naming both; once B moves on, 200', async () => {
    const hold = b.running.ctx.projections.hold();
    let released = false;
    try {
      const created = await a.http.post('/api/projects').send({ name: 'held' }).expect(201);
      const asked = created.headers['x-log-position']!;
      const res = await b.http.get('/api/projects/held').set('X-Min-Log-Position', asked).expect(503);
      expect(problemOf(res).title).toBe('Read model behind');
      expect(res.body.detail).toContain(`has not reached log position ${asked}`);
      expect(res.body.detail).toMatch(/it has reached position \d+/);
      const later = b.http.get('/api/projects/held').set('X-Min-Log-Position', asked);
      hold.release();
      released = true;
      expect((await later).status).toBe(200);
    } finally {
      if (!released) hold.release();
    }
  });

  it('given a project created on A, when B creates a skill in it naming that position, then B knows the project', async () => {
    const created = await a.http.post('/api/projects').send({ name: 'made_on_a' }).expect(201);
    await b.http
      .post('/api/projects/made_on_a/skills')
      .set('X-Min-Log-Position', created.headers['x-log-position']!)
      .send(skill('on_b', 'x'))
      .expect(201);
  });

  it('given a process restarted after a write, when it is asked for that position, then it answers at once', async () => {
    const created = await a.http.post('/api/projects').send({ name: 'before_restart' }).expect(201);
    const asked = created.headers['x-log-position']!;
    await b.http.get('/api/projects/before_restart').set('X-Min-Log-Position', asked).expect(200);
    b = await b.restart();
    cluster.apps[1] = b;
    // At once: started, it has already applied that position (nothing for the request to wait for).
    expect(b.running.ctx.projections.highestApplied).toBeGreaterThanOrEqual(BigInt(asked));
    await b.http.get('/api/projects/before_restart').set('X-Min-Log-Position', asked).expect(200);
  });
});
