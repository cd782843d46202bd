import type { JobCreated, JobRunEvent, MindledgerEvent } from '../../events';
import { at, projectCreated } from '../support/project';
import { projected } from '../support/projection';

const owner = { actor: null, user: null, role: null, project: null };
const hourly: JobCreated = {
  type: 'JobCreated',
  data: {
    projectId: 1,
    project: 'proj',
    name: 'hourly',
    query: 'SELECT 1; SELECT 2',
    ifQuery: null,
    startAt: '2030-01-01T00:10:00.000Z',
    endAt: '2030-01-01T03:00:00.000Z',
    every: { n: 1, unit: 'hour' },
    owner,
    createdAt: at,
  },
};
// Positions: project 1, job 2, then the run's events.
const run = (n: number, tick: string, claimId: string): MindledgerEvent[] => [
  {
    type: 'JobRunStarted',
    data: {
      jobId: 2,
      projectId: 1,
      run: n,
      tick,
      previousTick: null,
      claimId,
      node: 'n1',
      startedAt: tick,
      leaseUntil: tick,
    },
  },
  {
    type: 'JobStatementRan',
    data: {
      jobId: 2,
      run: n,
      claimId,
      index: 0,
      query: 'SELECT 1',
      outcome: 'rows',
      rows: 1,
      error: null,
      at: tick,
    },
  },
];
const failed = (n: number, claimId: string): JobRunEvent => ({
  type: 'JobRunFailed',
  data: { jobId: 2, run: n, claimId, error: 'no such table', failedAt: '2030-01-01T02:10:01.000Z' },
});

describe('jobs and job_runs tables', () => {
  it('shows a job with its next run, moved on by each claimed tick and gone past END', async () => {
    const fresh = await projected([projectCreated, hourly]);
    expect(fresh('jobs')).toEqual([
      expect.objectContaining({
        ID: 2n,
        NAME: 'hourly',
        SCHEDULE_STR: 'every 1 hour',
        NEXT_RUN_AT: new Date('2030-01-01T00:10:00.000Z'),
        LAST_TICK: null,
        RUNS: 0,
      }),
    ]);
    const ran = await projected([projectCreated, hourly, ...run(1, '2030-01-01T02:10:00.000Z', 'c1')]);
    expect(ran('jobs')).toEqual([
      expect.objectContaining({
        NEXT_RUN_AT: null,
        LAST_TICK: new Date('2030-01-01T02:10:00.000Z'),
        RUNS: 1,
      }),
    ]);
  });

  it("keeps each run's statements, outcome and error as MindsDB's jobs_history", async () => {
    const table = await projected([
      projectCreated,
      hourly,
      ...run(1, '2030-01-01T02:10:00.000Z', 'c1'),
      failed(1, 'c1'),
    ]);
    expect(table('job_runs')).toEqual([
      expect.objectContaining({
        NAME: 'hourly',
        PROJECT: 'proj',
        RUN: 1,
        STATUS: 'failed',
        QUERY: 'SELECT 1; ',
        ERROR: 'no such table',
        RUN_START: new Date('2030-01-01T02:10:00.000Z'),
        RUN_END: new Date('2030-01-01T02:10:01.000Z'),
        STATEMENTS: 1,
      }),
    ]);
  });

  it('removes a deleted job with its runs, and leaves no history for a run claimed after', async () => {
    const table = await projected([
      projectCreated,
      hourly,
      ...run(1, '2030-01-01T00:10:00.000Z', 'c1'),
      { type: 'JobDeleted', data: { projectId: 1, jobId: 2, name: 'hourly', deletedAt: at } },
      ...run(2, '2030-01-01T01:10:00.000Z', 'c2'),
    ]);
    expect(table('jobs')).toEqual([]);
    expect(table('job_runs')).toEqual([]);
  });
});
