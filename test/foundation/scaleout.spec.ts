import { isDeepStrictEqual } from 'node:util';
import { startPostgresCluster } from '../support/app';

const waitUntil = async (check: () => Promise<boolean>, timeoutMs: number) => {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await check()) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`not visible within ${timeoutMs} ms`);
};

describe('scale-out: two API processes on one PostgreSQL log', () => {
  let cluster: Awaited<ReturnType<typeof startPostgresCluster>>;
  beforeAll(async () => {
    cluster = await startPostgresCluster(2);
  });
  afterAll(() => cluster.dispose());

  it('creates the default project once, whichever process starts first', async () => {
    // What two brand-new processes hold: a cluster of its own, which no other test wrote to.
    const fresh = await startPostgresCluster(2);
    try {
      const [a, b] = fresh.apps;
      const events = (await a!.http.get('/api/events?stream=project-mindsdb').expect(200)).body.events;
      expect(events).toHaveLength(1);
      expect(
        (await b!.http.get('/api/projects').expect(200)).body.map((p: { name: string }) => p.name),
      ).toEqual(['mindsdb']);
    } finally {
      await fresh.dispose();
    }
  });

  // How soon is the log's news (test/foundation/log-news.spec.ts, with polling off) and the machine's
  // speed; here, that the write arrives at all, without the reader asking for its position.
  it('shows a write on one process on the other, unasked', async () => {
    const [a, b] = cluster.apps;
    await a!.http.post('/api/projects').send({ name: 'from_a' }).expect(201);
    await waitUntil(async () => (await b!.http.get('/api/projects/from_a')).status === 200, 15_000);
    await b!.http.delete('/api/projects/from_a').expect(204);
    await waitUntil(async () => (await a!.http.get('/api/projects/from_a')).status === 404, 15_000);
  });

  it('lets concurrent writers on both processes race for one name: one wins, the log has one creation', async () => {
    const [a, b] = cluster.apps;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? a! : b!).http.post('/api/projects').send({ name: 'contended' }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    const events = (await a!.http.get('/api/events?stream=project-contended').expect(200)).body.events;
    expect(events).toHaveLength(1);
  });

  it('ends with identical read models on both processes', async () => {
    const [a, b] = cluster.apps;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? a! : b!).http
          .post('/api/projects')
          .send({ name: `n${i}` })
          .expect(201),
      ),
    );
    const rows = (x: typeof a) => x!.running.ctx.duck.query('SELECT * FROM events ORDER BY global_position');
    await waitUntil(async () => isDeepStrictEqual(await rows(a), await rows(b)), 2000);
    expect(await rows(a)).toEqual(await rows(b));
    const projects = (x: typeof a) => x!.running.ctx.duck.query('SELECT * FROM projects ORDER BY id');
    expect(await projects(a)).toEqual(await projects(b));
  });
});
