/**
 * SQL_TIMEOUT_MS used to start once a reader was held and the query parsed and resolved: a
 * 20,000-branch UNION ALL ran 97 s against a 30 s limit (DuckDB plans it without heeding an
 * interrupt), and a query waiting for a reader waited as long as the pool told it. The limit now
 * counts from the request's arrival, the text is capped (SQL_MAX_QUERY_BYTES) and so is its number
 * of SELECTs, and every rewriting step on the main thread is linear in the text.
 */
import { querySql, startTestApp, type TestApp } from '../support/app';
import { pingFromAnotherThread, serve } from './sql-pings';

const union = (branches: number) =>
  Array.from({ length: branches }, (_, i) => `SELECT ${i} AS x`).join(' UNION ALL ');

describe('the SQL text limits, with the default SQL_MAX_QUERY_BYTES', () => {
  let t: TestApp;
  let server: Awaited<ReturnType<typeof serve>>;
  const CAP = 256 * 1024;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { SQL_TIMEOUT_MS: '20000' });
    server = await serve(t.running.app);
  });
  afterAll(async () => {
    await server.close();
    await t.dispose();
  });

  it('given the 20,000-branch UNION ALL, when it is sent, then it is refused for its size, naming the limit', async () => {
    const a = await querySql(t, union(20_000));
    expect(a).toMatchObject({ type: 'error', error_code: 1153 });
    expect(a.error_message).toMatch(/SQL_MAX_QUERY_BYTES allows 262144/);
    expect(t.config.sqlMaxQueryBytes).toBe(CAP);
  });

  it('given texts around the limit, when sent, then bytes are counted in UTF-8 and a text at the limit runs', async () => {
    const head = "SELECT length('";
    const tail = "') AS n";
    const atCap = `${head}${'x'.repeat(CAP - head.length - tail.length)}${tail}`;
    expect(Buffer.byteLength(atCap)).toBe(CAP);
    expect((await querySql(t, atCap)).data).toEqual([[CAP - head.length - tail.length]]);
    // Half as many characters, two bytes each: over the limit.
    const wide = `${head}${'é'.repeat(CAP / 2)}${tail}`;
    expect(wide.length).toBeLessThan(CAP);
    expect(await querySql(t, wide)).toMatchObject({ type: 'error', error_code: 1153 });
  });

  it('given a UNION of 1,000 branches, when it runs, then it answers every row', async () => {
    const a = await querySql(t, union(1000));
    expect(a.type).toBe('table');
    expect(a.data).toHaveLength(1000);
  });

  it.each([
    ['blanks before the last character', `SELECT 1${' '.repeat(CAP - 20)}x`, 'table'],
    ['double-quoted strings', `SELECT 1 WHERE 'b' IN (${'"a", '.repeat((CAP - 40) / 5)}"b")`, 'table'],
    ['one long name', `SELECT ${'a'.repeat(CAP - 20)}`, 'error'],
    ['dotted names', `SELECT ${'a.'.repeat((CAP - 20) / 2)}b`, 'error'],
    ['versions of models', `SELECT 1 FROM ${'p.m.3, '.repeat((CAP - 40) / 7)}p.m.3`, 'error'],
    ['placeholders', `SELECT ${':a, '.repeat((CAP - 20) / 4)}:a`, 'table'],
    ['a MindsDB statement', `CREATE SKILL big USING type = 'x', n = [${'1,'.repeat((CAP - 60) / 2)}1]`, 'ok'],
  ])(
    'given %s up to the limit, when sent, then it answers and pings answer meanwhile',
    async (_shape, query, answers) => {
      expect(Buffer.byteLength(query)).toBeLessThanOrEqual(CAP);
      // Each ping must answer within 5 s: the quadratic steps held the event loop for minutes.
      const pings = pingFromAnotherThread(`${server.base}/api/util/ping`, 5000);
      const answer = await fetch(`${server.base}/api/sql/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, params: { a: 1 } }),
      }).finally(pings.stop);
      expect(answer.status).toBe(200);
      // The shapes that are valid SQL answer; a MindsDB statement with a 130k-item list once
      // answered V8's "Maximum call stack size exceeded".
      expect(((await answer.json()) as { type: string }).type).toBe(answers);
      for (const ping of await pings.results)
        expect(ping).toEqual({ sentAt: ping.sentAt, status: 200, body: { status: 'ok' } });
    },
    30_000,
  );
});

describe('the SQL time limit, from the request on', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp('sqlite', {
      SQL_TIMEOUT_MS: '2000',
      DUCKDB_READERS: '1',
      DUCKDB_ACQUIRE_TIMEOUT_MS: '30000',
    });
  });
  afterAll(() => t.dispose());

  it('given the only reader held for 6 s, when a query waits for it, then it answers 3024 at its own deadline', async () => {
    const held = t.running.ctx.duck.withReader(() => new Promise((r) => setTimeout(r, 6000)));
    const a = await querySql(t, 'SELECT 42 AS x WHERE 2 > 1');
    expect(a).toMatchObject({ type: 'error', error_code: 3024 });
    expect(a.error_message).toMatch(/longer than 2000 ms/);
    await held;
    expect((await querySql(t, 'SELECT 42 AS x WHERE 3 > 1')).data).toEqual([[42]]);
  });
});

describe('the number of SELECTs in a query', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', {
      SQL_MAX_QUERY_BYTES: String(4 * 1024 * 1024),
      SQL_TIMEOUT_MS: '30000',
    });
  });
  afterAll(() => t.dispose());

  it('given a raised byte limit, when the 20,000-branch UNION ALL comes, then it is refused for its number of SELECTs', async () => {
    const a = await querySql(t, union(20_000));
    expect(a).toMatchObject({ type: 'error', error_code: 1153 });
    expect(a.error_message).toMatch(/more than 1000 SELECTs/);
    expect((await querySql(t, 'SELECT 1 AS one')).data).toEqual([[1]]);
  });
});
