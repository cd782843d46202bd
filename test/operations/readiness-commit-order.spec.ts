/**
 * On PostgreSQL a sequence hands out log positions before commit, so a transaction can hold a
 * higher position than one that took a lower position later and commits after it. The tail reads
 * in commit order (transaction, position), so after such a pair its cursor stands at the lower
 * position with every event applied. Readiness and the lag gauge must then say the read model is at
 * the head, not one behind until the next write (a monitor waiting for lag 0 after its last write
 * waited for ever: CI saw position 307 against head 308 for 30 s with all 308 events applied).
 */
import pg from 'pg';
import { startTestApp } from '../support/app';
import { appendOn, projectCreated } from '../support/postgres';

const gauge = (metrics: string, name: string) => {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in the metrics`);
  return Number(line.slice(name.length + 1));
};

describe('readiness after commits out of position order (postgres)', () => {
  it('given a transaction holding a higher position that commits before a lower one in the tail, when both are applied, then /api/ready and the lag gauge put the read model at the head', async () => {
    const t = await startTestApp('postgres');
    const client = new pg.Client({ connectionString: t.config.eventStoreUrl });
    try {
      await client.connect();
      await client.query('BEGIN');
      // The open transaction takes its id first: it comes first in the tail's order.
      await client.query('SELECT pg_current_xact_id()');
      await t.running.ctx.log.append('project-lower', [projectCreated('lower')], 0n);
      // …and its position second: above the one just committed.
      await appendOn(client, 'higher');
      await client.query('COMMIT');

      const log = t.running.ctx.log;
      const shown = await log.readPage({ after: 0n, limit: 100 });
      const positionOf = (name: string) =>
        shown.find((e) => e.type === 'ProjectCreated' && e.data.name === name)!.meta.position;
      const lower = positionOf('lower');
      const higher = positionOf('higher');
      expect(higher).toBeGreaterThan(lower);
      const projections = t.running.ctx.projections;
      await projections.waitFor(higher, 10_000);
      await projections.waitFor(lower, 10_000);
      // The case itself: the cursor stands at the lower position, every event applied.
      expect(projections.position).toBe(lower);
      expect(projections.applied(higher)).toBe(true);

      const ready = await t.http.get('/api/ready');
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ position: String(higher), log_head: String(higher), lag: 0 });
      const metrics = (await t.http.get('/api/metrics').expect(200)).text;
      expect(gauge(metrics, 'mindledger_read_model_lag_events')).toBe(0);
      expect(gauge(metrics, 'mindledger_read_model_position')).toBe(Number(higher));
      expect(gauge(metrics, 'mindledger_event_log_head_position')).toBe(Number(higher));
    } finally {
      await client.end().catch(() => undefined);
      await t.dispose();
    }
  });
});
