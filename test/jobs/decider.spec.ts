import type { JobCreated, JobRunEvent, JobRunStarted } from '../../events';
import { decideJob, decideJobRun, type JobCommand, type JobRunCommand } from '../../src/jobs/decider';
import { dueTick, nextTick, parseEvery, parseJobDate, type JobSchedule } from '../../src/jobs/schedule';
import { jobRunsAggregate } from '../../src/jobs/state';
import { decideProject, type ProjectCommand } from '../../src/projects/decider';
import { deciderSpec } from '../support/decider';
import { at, now, projectCreated, projectSpec } from '../support/project';

const spec = projectSpec<JobCommand>(decideJob);
const owner = { actor: 'user:ada', user: 'ada', role: 'editor' as const, project: null };
const later = new Date(now.getTime() + 3_600_000);

const createJob = (data: Partial<Extract<JobCommand, { type: 'CreateJob' }>['data']> = {}): JobCommand => ({
  type: 'CreateJob',
  data: {
    name: 'nightly',
    query: 'SELECT 1',
    ifQuery: null,
    startAt: null,
    endAt: null,
    every: null,
    owner,
    ifNotExists: false,
    ...data,
  },
  metadata: { now },
});

const jobCreated = (data: Partial<JobCreated['data']> = {}): JobCreated => ({
  type: 'JobCreated',
  data: {
    projectId: 1,
    project: 'proj',
    name: 'nightly',
    query: 'SELECT 1',
    ifQuery: null,
    startAt: at,
    endAt: null,
    every: null,
    owner,
    createdAt: at,
    ...data,
  },
});

describe('job decider (the project stream)', () => {
  it('creates a job starting now when no START is given', () =>
    spec.given([projectCreated]).when(createJob()).then([jobCreated()]));

  it('starts a job whose START is past now, as MindsDB does', () =>
    spec
      .given([projectCreated])
      .when(createJob({ startAt: new Date('2020-01-01T00:00:00Z') }))
      .then([jobCreated()]));

  it('keeps END and EVERY for a repeating job, and drops END for a job that runs once', () => {
    const every = { n: 2, unit: 'hour' as const };
    spec
      .given([projectCreated])
      .when(createJob({ startAt: later, endAt: new Date(later.getTime() + 86_400_000), every }))
      .then([
        jobCreated({
          startAt: later.toISOString(),
          endAt: new Date(later.getTime() + 86_400_000).toISOString(),
          every,
        }),
      ]);
    spec
      .given([projectCreated])
      .when(createJob({ endAt: later }))
      .then([jobCreated()]);
  });

  it('refuses an END before START', () =>
    spec
      .given([projectCreated])
      .when(createJob({ startAt: later, endAt: now, every: { n: 1, unit: 'day' } }))
      .thenThrows('Invalid', /END must not be before START/));

  it('refuses a second job of the same name (any case), unless IF NOT EXISTS', () => {
    spec
      .given([projectCreated, jobCreated()])
      .when(createJob({ name: 'NIGHTLY' }))
      .thenThrows('Conflict', /Job already exists: NIGHTLY/);
    spec
      .given([projectCreated, jobCreated()])
      .when(createJob({ ifNotExists: true }))
      .then([]);
  });

  it('deletes a job by name; an unknown one is a 404 unless IF EXISTS', () => {
    const drop = (name: string, ifExists = false): JobCommand => ({
      type: 'DeleteJob',
      data: { name, ifExists },
      metadata: { now },
    });
    spec
      .given([projectCreated, jobCreated()])
      .when(drop('Nightly'))
      .then([{ type: 'JobDeleted', data: { projectId: 1, jobId: 2, name: 'nightly', deletedAt: at } }]);
    spec
      .given([projectCreated])
      .when(drop('nope'))
      .thenThrows('NotFound', /Job with name nope/);
    spec.given([projectCreated]).when(drop('nope', true)).then([]);
  });

  it('cascades: deleting the project deletes its jobs first', () =>
    projectSpec<ProjectCommand>(decideProject)
      .given([projectCreated, jobCreated()])
      .when({ type: 'DeleteProject', data: { name: 'proj' }, metadata: { now } })
      .then([
        { type: 'JobDeleted', data: { projectId: 1, jobId: 2, name: 'nightly', deletedAt: at } },
        { type: 'ProjectDeleted', data: { projectId: 1, name: 'proj', deletedAt: at } },
      ]));
});

const JOB = 7n;
const runSpec = deciderSpec<ReturnType<typeof jobRunsAggregate.initialState>, JobRunCommand>({
  ...jobRunsAggregate,
  decide: (command, state) => decideJobRun(command, state, JOB),
});
const tick = new Date('2026-03-04T05:00:00.000Z');
const claim = (claimId: string, t = tick, when = now): JobRunCommand => ({
  type: 'ClaimRun',
  data: { jobId: JOB, projectId: 1n, tick: t, claimId, node: 'n1', leaseMs: 60_000 },
  metadata: { now: when },
});
const started = (
  claimId: string,
  run = 1,
  t = tick,
  previousTick: string | null = null,
  when = now,
): JobRunStarted => ({
  type: 'JobRunStarted',
  data: {
    jobId: 7,
    projectId: 1,
    run,
    tick: t.toISOString(),
    previousTick,
    claimId,
    node: 'n1',
    startedAt: when.toISOString(),
    leaseUntil: new Date(when.getTime() + 60_000).toISOString(),
  },
});
const finished = (claimId: string, run = 1): JobRunEvent => ({
  type: 'JobRunFinished',
  data: { jobId: 7, run, claimId, finishedAt: at },
});

describe('job run decider (the job-runs stream)', () => {
  it('claims a tick once: a second claim for it, or an earlier one, decides nothing', () => {
    runSpec
      .given([])
      .when(claim('c1'))
      .then([started('c1')]);
    runSpec
      .given([started('c1'), finished('c1')])
      .when(claim('c2'))
      .then([]);
    runSpec
      .given([started('c1'), finished('c1')])
      .when(claim('c2', new Date(tick.getTime() - 60_000)))
      .then([]);
  });

  it('claims the next tick as run 2, naming the tick before', () => {
    const next = new Date(tick.getTime() + 3_600_000);
    runSpec
      .given([started('c1'), finished('c1')])
      .when(claim('c2', next))
      .then([started('c2', 2, next, tick.toISOString())]);
  });

  it('lets a run still under its lease finish before the next tick is claimed', () => {
    const next = new Date(tick.getTime() + 3_600_000);
    runSpec
      .given([started('c1')])
      .when(claim('c2', next))
      .then([]);
  });

  it('abandons a run whose lease ran out (its process died) when the next tick is claimed', () => {
    const next = new Date(tick.getTime() + 3_600_000);
    const whenLate = new Date(now.getTime() + 120_000);
    runSpec
      .given([started('c1')])
      .when(claim('c2', next, whenLate))
      .then([
        {
          type: 'JobRunAbandoned',
          data: {
            jobId: 7,
            run: 1,
            claimId: 'c1',
            reason: 'Its process stopped before the run finished (the claim lease ran out)',
            abandonedAt: whenLate.toISOString(),
          },
        },
        started('c2', 2, next, tick.toISOString(), whenLate),
      ]);
  });

  it('records outcomes only under the claim that holds the run', () => {
    const statement: JobRunCommand = {
      type: 'RecordStatement',
      data: { claimId: 'c1', index: 0, query: 'SELECT 1', outcome: 'rows', rows: 1, error: null },
      metadata: { now },
    };
    runSpec
      .given([started('c1')])
      .when(statement)
      .then([
        {
          type: 'JobStatementRan',
          data: {
            jobId: 7,
            run: 1,
            claimId: 'c1',
            index: 0,
            query: 'SELECT 1',
            outcome: 'rows',
            rows: 1,
            error: null,
            at,
          },
        },
      ]);
    runSpec
      .given([started('c1'), finished('c1')])
      .when(statement)
      .thenThrows('Conflict', /claim c1 on this job's run was lost/);
    runSpec
      .given([started('c1')])
      .when({
        type: 'SkipRun',
        data: { claimId: 'c1', reason: 'The IF query returned no rows' },
        metadata: { now },
      })
      .then([
        {
          type: 'JobRunSkipped',
          data: { jobId: 7, run: 1, claimId: 'c1', reason: 'The IF query returned no rows', skippedAt: at },
        },
      ]);
  });
});

describe('job schedule', () => {
  const start = Date.parse('2026-01-31T10:00:00Z');
  const hourly: JobSchedule = { startAt: start, endAt: null, every: parseEvery(1, 'hour') };

  it('is due at the latest tick not after now: missed ticks collapse into one', () => {
    expect(dueTick(hourly, null, start - 1)).toBeNull();
    expect(dueTick(hourly, null, start)).toBe(start);
    expect(dueTick(hourly, null, start + 5.5 * 3_600_000)).toBe(start + 5 * 3_600_000);
    expect(dueTick(hourly, start + 5 * 3_600_000, start + 5.9 * 3_600_000)).toBeNull();
    expect(nextTick(hourly, start + 5 * 3_600_000)).toBe(start + 6 * 3_600_000);
  });

  it('stops at END, and runs a job without EVERY once', () => {
    const ending = { ...hourly, endAt: start + 2.5 * 3_600_000 };
    expect(dueTick(ending, start + 3_600_000, start + 10 * 3_600_000)).toBe(start + 2 * 3_600_000);
    expect(nextTick(ending, start + 2 * 3_600_000)).toBeNull();
    const once: JobSchedule = { startAt: start, endAt: null, every: null };
    expect(dueTick(once, null, start + 10 * 3_600_000)).toBe(start);
    expect(dueTick(once, start, start + 10 * 3_600_000)).toBeNull();
    expect(nextTick(once, start)).toBeNull();
  });

  it('adds months on the calendar, keeping the day (clamped to the month)', () => {
    const monthly: JobSchedule = { startAt: start, endAt: null, every: parseEvery(null, 'months') };
    expect(new Date(nextTick(monthly, start)!).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(new Date(dueTick(monthly, null, Date.parse('2026-04-15T00:00:00Z'))!).toISOString()).toBe(
      '2026-03-31T10:00:00.000Z',
    );
  });

  it("reads MindsDB's dates and periods, and names what it cannot", () => {
    expect(parseJobDate('2026-05-01 12:30:00', now, 'START').toISOString()).toBe('2026-05-01T12:30:00.000Z');
    expect(parseJobDate('2026-05-01', now, 'START').toISOString()).toBe('2026-05-01T00:00:00.000Z');
    expect(parseJobDate('now', now, 'START')).toEqual(now);
    expect(() => parseJobDate('tomorrow', now, 'END')).toThrow(/Can't parse date: tomorrow/);
    expect(parseEvery(null, 'min')).toEqual({ n: 1, unit: 'minute' });
    expect(() => parseEvery(2, 'fortnights')).toThrow(/Unknown period: fortnights/);
  });
});
