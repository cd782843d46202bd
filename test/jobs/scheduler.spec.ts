/**
 * The scheduler on a clock the spec moves: a process that was down runs the ticks it missed once;
 * a run left open by a process that died holds its tick until its lease runs out, and the next
 * tick's claim then closes it as abandoned; a process stopping mid-job records nothing more.
 */
import { jobRunsAggregate, jobRunsStream } from '../../src/jobs/state';
import { decideJobRun } from '../../src/jobs/decider';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, HOUR, manualClock, NO_POLL } from './support';

const LEASE_MS = 10 * 60_000;

describe.each(storeKinds)('the job scheduler (%s)', (store) => {
  let t: TestApp;
  const time = manualClock('2030-01-01T00:00:00.000Z');
  const jobId = async (name: string) =>
    ((await t.http.get(`/api/projects/mindsdb/jobs/${name}`).expect(200)).body as { id: number }).id;
  const ticksOf = async (id: number) =>
    (await eventsOf(t, `job-runs-${id}`)).filter((e) => e.type === 'JobRunStarted').map((e) => e.data.tick);

  beforeAll(async () => {
    t = await startTestApp(store, { ...NO_POLL, JOBS_LEASE_MS: String(LEASE_MS) }, { clock: time.clock });
  });
  afterAll(() => t.dispose());

  it('given a process down for ten hours, when it starts again, then the job runs once for the latest tick', async () => {
    // (Each test sets the clock it starts from: another may have moved it.)
    time.set('2030-01-01T00:00:00.000Z');
    expect((await querySql(t, 'CREATE JOB mindsdb.hourly (SELECT 1) EVERY hour')).type).toBe('ok');
    const id = await jobId('hourly');
    await t.running.jobs.tick();
    // The process stops; ten hours pass; another starts on the same log and data.
    t = await t.restart();
    time.advance(10 * HOUR + 60_000);
    await t.running.jobs.tick();
    await t.running.jobs.tick();
    expect(await ticksOf(id)).toEqual(['2030-01-01T00:00:00.000Z', '2030-01-01T10:00:00.000Z']);
    expect((await t.http.get('/api/projects/mindsdb/jobs/hourly').expect(200)).body.next_run_at).toBe(
      '2030-01-01 11:00:00.000000',
    );
  });

  it('given a run claimed by a process that died, when the next tick comes, then it waits for the lease and then abandons that run', async () => {
    time.set('2030-01-02T00:00:00.000Z');
    expect((await querySql(t, 'CREATE JOB mindsdb.orphaned (SELECT 1) EVERY minute')).type).toBe('ok');
    const id = BigInt(await jobId('orphaned'));
    // Given a claim of the first tick by a process that then died (nothing ran under it)
    await t.running.ctx.commands.run(jobRunsStream(id), jobRunsAggregate, (s) =>
      decideJobRun(
        {
          type: 'ClaimRun',
          data: {
            jobId: id,
            projectId: 1n,
            tick: time.clock(),
            claimId: 'dead-claim',
            node: 'dead-node',
            leaseMs: LEASE_MS,
          },
          metadata: { now: time.clock() },
        },
        s,
        id,
      ),
    );
    // When the next ticks come within its lease, nothing runs
    time.advance(2 * 60_000);
    await t.running.jobs.tick();
    expect(await ticksOf(Number(id))).toEqual(['2030-01-02T00:00:00.000Z']);
    // When the lease has run out, the next tick's claim closes the dead run and runs
    time.advance(LEASE_MS);
    await t.running.jobs.tick();
    const events = await eventsOf(t, `job-runs-${id}`);
    expect(events.map((e) => e.type)).toEqual([
      'JobRunStarted',
      'JobRunAbandoned',
      'JobRunStarted',
      'JobStatementRan',
      'JobRunFinished',
    ]);
    expect(events[1]!.data).toMatchObject({ run: 1, claimId: 'dead-claim' });
    const history = (await t.http.get('/api/projects/mindsdb/jobs/orphaned/history').expect(200)).body as {
      run: number;
      status: string;
      error: string | null;
    }[];
    expect(history.map((h) => [h.run, h.status])).toEqual([
      [1, 'abandoned'],
      [2, 'finished'],
    ]);
    expect(history[0]!.error).toMatch(/lease ran out/);
  });
});
