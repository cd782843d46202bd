/**
 * A list parameter (`IN :ids`) became one placeholder per item, each substituted by a regex over
 * the whole text: 40,000 ids held the event loop for 37 s, during which the service answered
 * nothing at all, pings included. A list is now one DuckDB LIST value, and a cap refuses more.
 */
import { loadConfig } from '../../src/config';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { pingFromAnotherThread, serve } from './sql-pings';

const CAP = 50_000;

describe('list parameters', () => {
  let t: TestApp;
  let server: Awaited<ReturnType<typeof serve>>;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { SQL_MAX_LIST_PARAM: String(CAP) });
    server = await serve(t.running.app);
    base = server.base;
  });
  afterAll(async () => {
    await server.close();
    await t.dispose();
  });

  const post = (query: string, params: Record<string, unknown>) =>
    fetch(`${base}/api/sql/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, params }),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));

  it('given 40,000 ids, when the query runs, then pings sent meanwhile answer and the query answers its rows', async () => {
    const ids = Array.from({ length: 40_000 }, (_, i) => i);
    // Every ping sent while the query runs must answer within 5 s: far beyond a ping's
    // milliseconds, far below the 20 s the event loop was held.
    const pings = pingFromAnotherThread(`${base}/api/util/ping`, 5000);
    const query = post('select count(*) AS n from range(100000) r(x) where x in :a', { a: ids });
    await query.finally(pings.stop);
    for (const ping of await pings.results)
      expect(ping).toEqual({ sentAt: ping.sentAt, status: 200, body: { status: 'ok' } });
    expect((await query).body).toMatchObject({ type: 'table', data: [[40_000]] });
    expect((await post('select 1 where 1 in :a', { a: ids })).body).toMatchObject({ data: [[1]] });
  }, 60_000);

  it('given lists of every kind, when bound, then IN answers as the same values written out would (NULLs and the empty list too)', async () => {
    const count = async (where: string, a: unknown[]) =>
      (await querySql(t, `SELECT count(*) AS n FROM range(5) r(x) WHERE ${where}`, { params: { a } })).data;
    expect(await count('x IN :a', [1, 3, 99])).toEqual([[2]]);
    expect(await count('x IN (:a)', [1, 3])).toEqual([[2]]);
    expect(await count('x NOT IN :a', [1, 3])).toEqual([[3]]);
    // An empty list matches nothing, and NOT IN an empty list matches everything.
    expect(await count('x IN :a', [])).toEqual([[0]]);
    expect(await count('x NOT IN :a', [])).toEqual([[5]]);
    // A NULL item makes every non-match NULL: NOT IN keeps no row, IN keeps the matches.
    expect(await count('x IN :a', [1, null])).toEqual([[1]]);
    expect(await count('x NOT IN :a', [1, null])).toEqual([[0]]);
    expect(await count('x IN :a', [null])).toEqual([[0]]);
    expect(await count('x::DOUBLE IN :a', [1.5, 2])).toEqual([[1]]);
    expect(await count('x::VARCHAR IN :a', ['2', '4', "o'brien"])).toEqual([[2]]);
    expect(await count('(x > 2) IN :a', [true])).toEqual([[2]]);
    // Text that merely looks like a placeholder is left alone.
    const text = await querySql(t, "SELECT 'in $a' AS s, 2 IN :a AS m", { params: { a: [2] } });
    expect(text.data).toEqual([['in $a', true]]);
    // Outside IN, the parameter is the list itself.
    expect((await querySql(t, 'SELECT :a AS l', { params: { a: [1, 2] } })).data).toEqual([[[1, 2]]]);
    expect((await querySql(t, 'SELECT 1 WHERE 1 IN :a', { params: { a: [{}] } })).error_code).toBe(1210);
  });

  it('given more items than SQL_MAX_LIST_PARAM, when the query runs, then it answers an error naming the limit', async () => {
    const a = await post('select 1 where 1 in :a', { a: Array.from({ length: CAP + 1 }, (_, i) => i) });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ type: 'error', error_code: 1153 });
    expect(a.body.error_message).toMatch(/SQL_MAX_LIST_PARAM/);
    expect(a.body.error_message).toContain(String(CAP));
    // The cap counts every list of the query together.
    const half = Array.from({ length: CAP / 2 + 1 }, (_, i) => i);
    const b = await post('select 1 where 1 in :a and 2 in :b', { a: half, b: half });
    expect(b.body).toMatchObject({ type: 'error', error_code: 1153 });
    expect(loadConfig({}).sqlMaxListParam).toBe(10_000);
  }, 30_000);
});
