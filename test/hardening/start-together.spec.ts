import { querySql, startPostgresCluster } from '../support/app';
import { waitForHead } from '../support/promise-rebuild';

// Processes behind a load balancer start at the same moment on a database nobody has used yet.
// Each creates the tables it needs; PostgreSQL's `CREATE TABLE IF NOT EXISTS` is not safe
// against itself (pg_type's unique index), so this once stopped one of two nodes from starting.
describe('processes starting together on a fresh PostgreSQL log', () => {
  it('given a fresh database, when 4 processes start at once, then all start and each sees what another wrote', async () => {
    for (let round = 0; round < 3; round++) {
      const cluster = await startPostgresCluster(4, { together: true });
      try {
        const [first, ...others] = cluster.apps;
        await first!.http
          .post('/api/projects')
          .send({ name: `together_${round}` })
          .expect(201);
        await waitForHead(cluster.apps);
        for (const node of others) {
          const answer = await querySql(
            node,
            `SELECT NAME FROM information_schema.DATABASES WHERE NAME = 'together_${round}'`,
          );
          expect(answer).toMatchObject({ type: 'table' });
          expect(answer.data).toEqual([[`together_${round}`]]);
        }
      } finally {
        await cluster.dispose();
      }
    }
  });
});
