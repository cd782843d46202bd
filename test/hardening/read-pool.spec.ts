import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';

/**
 * Issue 10, critical 1: a query holds a pooled reader while name resolution reads through the
 * services; with every reader held that way, the second read waited on itself forever.
 */
describe.each(storeKinds)('the read pool under concurrent queries (%s)', (kind) => {
  describe.each([8, 2])('with %i readers', (readers) => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp(kind, { DUCKDB_READERS: String(readers) });
    });
    afterAll(async () => t.dispose());

    it('given a new project, when 4× the pool of distinct queries run at once, then every one answers its rows', async () => {
      await t.http.post('/api/projects').send({ name: 'relp' }).expect(201);
      await t.http
        .post('/api/projects/relp/skills')
        .send({ skill: { name: 'only', type: 'text2sql', params: { database: 'files' } } })
        .expect(201);
      const n = readers * 4;
      const answers = await Promise.all(
        Array.from({ length: n }, (_, i) => querySql(t, `SELECT name FROM relp.skills WHERE ${i} = ${i}`)),
      );
      for (const a of answers) expect(a).toMatchObject({ type: 'table', data: [['only']] });
      // …and the pool is whole again: uncached reads after the burst answer too.
      const databases = await t.http.get('/api/databases').expect(200);
      expect(databases.body.map((d: { name: string }) => d.name)).toContain('relp');
      expect((await querySql(t, 'SELECT count(*) AS n FROM relp.skills WHERE 1 = 1')).data).toEqual([[1]]);
    });
  });
});

describe.each(storeKinds)('writes and queries at once (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { DUCKDB_READERS: '2', DUCKDB_ACQUIRE_TIMEOUT_MS: '5000' });
  });
  afterAll(async () => t.dispose());

  it('given readers busy resolving names, when writes share their cached reads, then nobody waits on anybody for good', async () => {
    await t.http.post('/api/projects').send({ name: 'mixed' }).expect(201);
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 24; i++) {
      work.push(
        t.http
          .post('/api/projects/mixed/skills')
          .send({ skill: { name: `s_${i}`, type: 'text2sql', params: { database: 'files' } } })
          .then((res) => expect(res.status).toBe(201)),
      );
      work.push(
        querySql(t, `SELECT name FROM mixed.skills WHERE ${i} >= 0`).then((a) =>
          expect(a.type).toBe('table'),
        ),
      );
      work.push(t.http.get('/api/projects').then((res) => expect(res.status).toBe(200)));
    }
    await Promise.all(work);
    expect((await querySql(t, 'SELECT count(*) FROM mixed.skills WHERE 2 > 1')).data).toEqual([[24]]);
  }, 60_000);
});

describe('a read that cannot get a connection in time', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', {
      DUCKDB_READERS: '1',
      DUCKDB_ACQUIRE_TIMEOUT_MS: '300',
      SQL_TIMEOUT_MS: '20000',
    });
  });
  afterAll(async () => t.dispose());

  it('given the only reader is busy past the deadline, when another query comes, then it answers "server busy" instead of hanging', async () => {
    let slowDone = false;
    const slow = querySql(
      t,
      'SELECT count(*) FROM range(200000000) a WHERE (a.range * 7) % 13 = 5 AND sqrt(a.range) > 0',
    ).finally(() => (slowDone = true));
    // Once the slow query holds the reader, a query answers "busy" (each probe a text of its own: a
    // repeated one would be answered from the cache, needing no reader). A loaded machine may take
    // a while to get the slow query that far, which a fixed pause did not allow for.
    let busy: Awaited<ReturnType<typeof querySql>> | undefined;
    for (let probe = 0; !slowDone; probe++) {
      const answer = await querySql(t, `SELECT ${probe} AS x WHERE 1 = 1`);
      if (answer.type === 'error') {
        busy = answer;
        break;
      }
      expect(answer).toMatchObject({ type: 'table', data: [[probe]] });
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(busy).toMatchObject({ type: 'error', error_code: 1040 });
    if (!busy) throw new Error('the slow query ended before any query found the reader busy');
    expect(busy.error_message).toMatch(/busy/);
    const rest = await t.http.get('/api/projects/nope_not_there_1');
    expect([503, 404]).toContain(rest.status);
    if (rest.status === 503) {
      expect(rest.headers['retry-after']).toBe('1');
      expect(rest.body).toMatchObject({ status: 503, title: 'Server busy' });
    }
    expect((await slow).type).toBe('table');
  }, 60_000);
});
