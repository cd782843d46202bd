/**
 * Two processes on one PostgreSQL log fire the same jobs on the same clock: every tick runs exactly
 * once, whichever process wins it, and the runs are the job's ticks in order. Each process's timer
 * is off; both look for due jobs at once, as often as the spec says, with read models that may lag
 * each other (the claim is decided on the log, not on a read model).
 */
import { querySql, startPostgresCluster, type TestApp } from '../support/app';
import { eventsOf, manualClock, NO_POLL } from './support';

const MINUTE = 60_000;

describe('jobs on two processes sharing one PostgreSQL log', () => {
  const time = manualClock('2030-01-01T00:00:00.000Z');
  let cluster: Awaited<ReturnType<typeof startPostgresCluster>>;
  beforeAll(async () => {
    cluster = await startPostgresCluster(2, { env: NO_POLL, clock: time.clock });
  });
  afterAll(() => cluster.dispose());

  it('given a job every minute, when both processes look at every step of the clock, then each tick runs once', async () => {
    const [a, b] = cluster.apps as [TestApp, TestApp];
    // Given a job made on one process, known to both
    const created = await querySql(
      a,
      "CREATE JOB mindsdb.every_minute (SELECT 1) START '2030-01-01 00:01:00' EVERY minute",
    );
    expect(created.type).toBe('ok');
    const job = (await a.http.get('/api/projects/mindsdb/jobs/every_minute').expect(200)).body as {
      id: number;
    };
    await b.running.ctx.projections.waitFor(BigInt(job.id), 10_000);
    // When the clock moves on by steps of 0 to 3 minutes (a fixed pattern), both processes racing
    const steps = [1, 0, 1, 1, 2, 0, 3, 1, 1, 0, 2, 1, 1, 3, 1];
    const expected: string[] = [];
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    let last: number | null = null;
    for (const minutes of steps) {
      now += minutes * MINUTE;
      time.set(new Date(now).toISOString());
      await Promise.all([a.running.jobs.tick(), b.running.jobs.tick()]);
      const due = now >= Date.parse('2030-01-01T00:01:00.000Z') ? now : null;
      if (due !== null && due !== last) {
        expected.push(new Date(due).toISOString());
        last = due;
      }
    }
    // Then the log holds one run per tick that came due, in order, each finished
    const events = await eventsOf(a, `job-runs-${job.id}`);
    const started = events.filter((e) => e.type === 'JobRunStarted');
    expect(started.map((e) => e.data.tick)).toEqual(expected);
    expect(started.map((e) => e.data.run)).toEqual(expected.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'JobRunFinished')).toHaveLength(expected.length);
    expect(events.filter((e) => e.type === 'JobStatementRan')).toHaveLength(expected.length);
  });
});
