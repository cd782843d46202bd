import type { JobDeleted, JobEvery, JobOwner, RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { defineResourcesSlice, requireNamed, withoutResource, withResource } from '../shared/resourceState';
import type { ProjectRef } from '../shared/projectState';

/** A job as its project's stream knows it. Its id is the log position of its creation. */
export type Job = {
  readonly id: bigint;
  readonly name: string;
  readonly query: string;
  readonly ifQuery: string | null;
  readonly startAt: string;
  readonly endAt: string | null;
  readonly every: JobEvery | null;
  readonly owner: JobOwner;
  readonly createdAt: string;
};
export type JobsState = ReadonlyMap<bigint, Job>;

const evolveJobs = (jobs: JobsState, event: RecordedEvent): JobsState => {
  switch (event.type) {
    case 'JobCreated': {
      const d = event.data;
      return withResource(jobs, {
        id: event.meta.position,
        name: d.name,
        query: d.query,
        ifQuery: d.ifQuery,
        startAt: d.startAt,
        endAt: d.endAt,
        every: d.every,
        owner: d.owner,
        createdAt: d.createdAt,
      });
    }
    case 'JobDeleted':
      return withoutResource(jobs, event.data.jobId);
    default:
      return jobs;
  }
};

/** A job by name (case-insensitive, as MindsDB's names), or a 404 naming it. */
export const requireJob = (jobs: JobsState, name: string): Job => requireNamed(jobs, name, 'Job');

/** The event deleting `job`: DROP JOB's and its project's deletion's. */
export const jobDeleted = (job: Job, project: ProjectRef, at: string): JobDeleted => ({
  type: 'JobDeleted',
  data: { projectId: Number(project.id), jobId: Number(job.id), name: job.name, deletedAt: at },
});

export const jobsSlice = defineResourcesSlice('jobs', evolveJobs, jobDeleted);

/** The stream holding one job's runs: claims and outcomes, never the project's stream. */
export const jobRunsStream = (jobId: bigint) => `job-runs-${jobId}`;

/** What a job's runs stream folds into: the last tick claimed, and the run open now (if any). */
export type JobRunsState = {
  readonly runs: number;
  /** The latest tick claimed (ms): no tick at or before it is claimed again. */
  readonly lastTick: number | null;
  readonly open: { readonly run: number; readonly claimId: string; readonly leaseUntil: number } | null;
};

const evolveJobRuns = (state: JobRunsState, event: RecordedEvent): JobRunsState => {
  switch (event.type) {
    case 'JobRunStarted':
      return {
        runs: event.data.run,
        lastTick: Date.parse(event.data.tick),
        open: {
          run: event.data.run,
          claimId: event.data.claimId,
          leaseUntil: Date.parse(event.data.leaseUntil),
        },
      };
    case 'JobRunFinished':
    case 'JobRunFailed':
    case 'JobRunSkipped':
    case 'JobRunAbandoned':
      return state.open?.claimId === event.data.claimId ? { ...state, open: null } : state;
    default:
      return state;
  }
};

export const jobRunsAggregate: Aggregate<JobRunsState> = {
  initialState: () => ({ runs: 0, lastTick: null, open: null }),
  evolve: evolveJobRuns,
};
