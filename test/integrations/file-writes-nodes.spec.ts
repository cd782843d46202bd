/**
 * No lost write: `INSERT INTO files.f (SELECT …)` appends by reading the file and recording the
 * whole new file. Two processes on one log appending at once each read the same file; the second
 * record would drop the first's rows. The record names the file it was made from (its digest) and
 * is refused as a conflict when the file changed since; the write is then made again from a fresh
 * read. Every row of every append arrives, once.
 */
import { querySql, startPostgresCluster } from '../support/app';

describe('appends to one file from two processes at once', () => {
  let cluster: Awaited<ReturnType<typeof startPostgresCluster>>;

  beforeAll(async () => {
    cluster = await startPostgresCluster(2);
  });
  afterAll(async () => {
    await cluster?.dispose();
  });

  it('given concurrent INSERT INTO files.f on both nodes, then the file holds every row once', async () => {
    const [a, b] = cluster.apps as [(typeof cluster.apps)[0], (typeof cluster.apps)[0]];
    const made = await querySql(a, 'CREATE TABLE files.tally (SELECT 0 AS n)');
    expect(made).toMatchObject({ type: 'ok' });
    const appends = Array.from({ length: 6 }, (_, i) => i + 1);
    const answers = await Promise.all(
      appends.map((n) => querySql(n % 2 === 0 ? a : b, `INSERT INTO files.tally (SELECT ${n} AS n)`)),
    );
    for (const answer of answers) expect(answer).toMatchObject({ type: 'ok', affected_rows: 1 });
    for (const node of [a, b]) {
      let rows: unknown[][] = [];
      // The other node's last write reaches this node's read model by polling.
      for (let i = 0; i < 100; i++) {
        rows = (await querySql(node, 'SELECT n FROM files.tally ORDER BY n')).data ?? [];
        if (rows.length === appends.length + 1) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(rows.map((r) => Number(r[0]))).toEqual([0, ...appends]);
    }
  });
});
