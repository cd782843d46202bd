/**
 * Heavy SQL queries starved the API: ten cross joins held every pooled reader (and every thread
 * of libuv's pool, where DuckDB calls run) and GET /api/projects waited 59 s. SQL endpoint queries
 * now hold at most DUCKDB_READERS − 1 readers and libuv's threads − 2 (or SQL_MAX_CONCURRENT); one
 * more waits for a slot and answers "server busy" (1040).
 */
import { loadConfig } from '../../src/config';
import { querySql, startTestApp, type SqlAnswer, type TestApp } from '../support/app';

/** Runs until the SQL time limit interrupts it. */
const SLOW = 'SELECT count(*) FROM range(100000000000) a WHERE sqrt(a.range) > -1';

describe('readers kept for the API while SQL queries are busy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', {
      DUCKDB_READERS: '3',
      // The wait for a slot well inside the slow queries' time limit (which the test waits out).
      DUCKDB_ACQUIRE_TIMEOUT_MS: '500',
      SQL_TIMEOUT_MS: '3000',
      DUCKDB_THREADS: '1',
    });
  });
  afterAll(() => t.dispose());

  it('given as many slow SQL queries as readers, when the API reads, then it answers, and the query past the SQL share is busy', async () => {
    // A new project: the GET below is the first read at this read-model version (no cached answer).
    await t.http.post('/api/projects').send({ name: 'reserve_probe' }).expect(201);
    const slow = [0, 1, 2].map((i) => querySql(t, `${SLOW} AND ${i} = ${i}`));
    await new Promise((r) => setTimeout(r, 300));
    const projects = await t.http.get('/api/projects');
    expect(projects.status).toBe(200);
    expect(projects.body.map((p: { name: string }) => p.name)).toContain('reserve_probe');
    const answers: SqlAnswer[] = await Promise.all(slow);
    // Two ran until the time limit; the third found both SQL connections busy.
    expect(answers.map((a) => a.error_code).sort()).toEqual([1040, 3024, 3024]);
    const busy = answers.find((a) => a.error_code === 1040)!;
    expect(busy.error_message).toMatch(/All 2 connections for SQL queries stayed busy for 500 ms/);
    expect((await querySql(t, 'SELECT 1 AS one WHERE 4 > 3')).data).toEqual([[1]]);
  }, 30_000);
});

describe('the default share, in a process whose libuv pool has its 4 threads', () => {
  let t: TestApp;
  beforeAll(async () => {
    // As in the report: the default 8 readers. Jest's process keeps libuv's 4 threads, and each
    // running DuckDB call holds one: seven long queries took them all, and every other read waited.
    t = await startTestApp('sqlite', {
      DUCKDB_ACQUIRE_TIMEOUT_MS: '1000',
      SQL_TIMEOUT_MS: '3500',
      DUCKDB_THREADS: '1',
    });
  });
  afterAll(() => t.dispose());

  it('given ten slow queries, when the API reads and writes, then both answer before the queries are interrupted', async () => {
    const answeredAt: number[] = [];
    const slow = Array.from({ length: 10 }, (_, i) =>
      querySql(t, `${SLOW} AND ${i} = ${i}`).then((a) => {
        if (a.error_code === 3024) answeredAt.push(Date.now());
        return a;
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    await t.http.post('/api/projects').send({ name: 'during_slow_queries' }).expect(201);
    const projects = await t.http.get('/api/projects').expect(200);
    const apiAnsweredAt = Date.now();
    expect(projects.body.map((p: { name: string }) => p.name)).toContain('during_slow_queries');
    const answers = await Promise.all(slow);
    // The API did not wait for the running queries to end (at their 3.5 s time limit).
    expect(apiAnsweredAt).toBeLessThan(Math.min(...answeredAt));
    expect(answers.map((a) => a.error_code).sort()).toEqual([...Array(8).fill(1040), 3024, 3024]);
  }, 30_000);
});

describe('SQL_MAX_CONCURRENT', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', {
      DUCKDB_READERS: '4',
      SQL_MAX_CONCURRENT: '1',
      DUCKDB_ACQUIRE_TIMEOUT_MS: '500',
      SQL_TIMEOUT_MS: '3000',
      DUCKDB_THREADS: '1',
    });
  });
  afterAll(() => t.dispose());

  it('given one slot for SQL, when a second query comes during a slow one, then it is busy while REST reads answer', async () => {
    const slow = querySql(t, SLOW);
    await new Promise((r) => setTimeout(r, 200));
    expect(await querySql(t, 'SELECT 2 AS two WHERE 5 > 4')).toMatchObject({
      type: 'error',
      error_code: 1040,
    });
    await t.http.get('/api/databases').expect(200);
    expect((await slow).error_code).toBe(3024);
    expect((await querySql(t, 'SELECT 2 AS two WHERE 6 > 5')).data).toEqual([[2]]);
  }, 30_000);

  it('is optional (all readers but one) and at least 1', () => {
    expect(loadConfig({}).sqlMaxConcurrent).toBeUndefined();
    expect(loadConfig({ SQL_MAX_CONCURRENT: '3' }).sqlMaxConcurrent).toBe(3);
    expect(() => loadConfig({ SQL_MAX_CONCURRENT: '0' })).toThrow(/SQL_MAX_CONCURRENT/);
  });
});
