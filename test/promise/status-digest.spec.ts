import { startPostgresCluster, startTestApp, storeKinds, type TestApp } from '../support/app';
import { onFreshApp, uniqueName } from '../support/world';

type ReadModel = {
  position: string;
  digest: string;
  tables: { table: string; rows: number; hash: string }[];
};
const readModelOf = async (t: TestApp) =>
  (await t.http.get('/api/status').expect(200)).body.read_model as ReadModel;

/** Writes in a project of the test's own: a skill, an agent using it, the skill renamed to `uno`. */
const workload = async (t: TestApp, project = uniqueName('fp')) => {
  await t.http.post('/api/projects').send({ name: project }).expect(201);
  await t.http
    .post(`/api/projects/${project}/skills`)
    .send({ skill: { name: 'one', type: 'text2sql', params: { database: 'files', api_key: 'k' } } })
    .expect(201);
  await t.http
    .post(`/api/projects/${project}/agents`)
    .send({ agent: { name: 'helper', skills: ['one'] } })
    .expect(201);
  await t.http
    .put(`/api/projects/${project}/skills/one`)
    .send({ skill: { name: 'uno' } })
    .expect(200);
  return project;
};

const rowsOf = (m: ReadModel, table: string) => m.tables.find((x) => x.table === table)?.rows;

describe.each(storeKinds)('GET /api/status reports the read model (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t.dispose());

  it('given writes, when the status is read, then it names the position and a digest per table that moves with the data', async () => {
    const before = await readModelOf(t);

    await workload(t);

    const after = await readModelOf(t);
    expect(BigInt(after.position)).toBeGreaterThan(BigInt(before.position));
    expect(rowsOf(after, 'skills')).toBe((rowsOf(before, 'skills') ?? 0) + 1);
    expect(rowsOf(after, 'agents')).toBe((rowsOf(before, 'agents') ?? 0) + 1);
    expect(rowsOf(after, 'projects')).toBe((rowsOf(before, 'projects') ?? 0) + 1);
    expect(after.digest).not.toBe(before.digest);
    expect(after.tables.map((x) => x.table)).toEqual(
      expect.arrayContaining(['events', 'projects', 'skills', 'agents']),
    );
  });

  it('given a read model rebuilt from the log, when the status is read, then position and digest equal the live ones', async () => {
    // The test restarts its app: one of its own.
    await onFreshApp(kind, async (app) => {
      const project = await workload(app);
      // A skill write answers ahead of the read model, and the status waits for nothing: a read of
      // the renamed skill waits for it first.
      await app.http.get(`/api/projects/${project}/skills/uno`).expect(200);
      const live = await readModelOf(app);

      const rebuilt = await app.restart({ DUCKDB_FILE: ':memory:', PROJECTION_BATCH_SIZE: '3' });
      try {
        expect(await readModelOf(rebuilt)).toEqual(live);
      } finally {
        await rebuilt.stop();
      }
    });
  });
});

describe('two processes on one PostgreSQL log', () => {
  it('given writes on both nodes, when both have caught up, then their status digests are equal', async () => {
    const cluster = await startPostgresCluster(2);
    try {
      const [a, b] = cluster.apps as [TestApp, TestApp];
      await workload(a);
      const last = await b.http.post('/api/projects').send({ name: 'from_b' }).expect(201);
      // The status waits for nothing: both nodes may still stand, equal, before b's own write.
      const head = BigInt(last.headers['x-log-position']!);
      const caughtUp = (m: ReadModel) => BigInt(m.position) >= head;
      const deadline = Date.now() + 10_000;
      let ra = await readModelOf(a);
      let rb = await readModelOf(b);
      while (
        (!caughtUp(ra) || ra.position !== rb.position || ra.digest !== rb.digest) &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 100));
        ra = await readModelOf(a);
        rb = await readModelOf(b);
      }
      expect(rb).toEqual(ra);
      expect(ra.tables.find((x) => x.table === 'projects')?.rows).toBeGreaterThanOrEqual(3);
    } finally {
      await cluster.dispose();
    }
  });
});
