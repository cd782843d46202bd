import type {
  JobCreated,
  JobDeleted,
  JobEvery,
  JobOwner,
  JobRunAbandoned,
  JobRunEvent,
  JobRunStarted,
} from '../../events';
import type { ProjectAggregate } from '../shared/projectState';
import { conflict, invalid } from '../shared/errors';
import { findByName } from '../shared/params';
import {
  decideByType,
  decideInProject,
  deletionByName,
  type Now,
  type ProjectRule,
} from '../shared/decision';
import { jobDeleted, requireJob, type JobRunsState } from './state';

/** What job commands are decided on: the project and its jobs. */
type JobDecisionState = Pick<ProjectAggregate, 'project' | 'jobs'>;

export type JobCommand =
  | {
      type: 'CreateJob';
      data: {
        name: string;
        query: string;
        ifQuery: string | null;
        /** Null: now. */
        startAt: Date | null;
        endAt: Date | null;
        every: JobEvery | null;
        owner: JobOwner;
        /** IF NOT EXISTS: an existing job of that name is kept, nothing recorded. */
        ifNotExists: boolean;
      };
      metadata: Now;
    }
  | { type: 'DeleteJob'; data: { name: string; ifExists: boolean }; metadata: Now };

type JobEvent = JobCreated | JobDeleted;
type Decide<T extends JobCommand['type']> = ProjectRule<JobCommand, T, JobDecisionState, JobEvent>;

const createJob: Decide<'CreateJob'> = (command, state, { project, at }) => {
  const d = command.data;
  const now = command.metadata.now;
  if (findByName(state.jobs.values(), d.name)) {
    if (d.ifNotExists) return [];
    throw conflict(`Job already exists: ${d.name}`, 'Job already exists');
  }
  if (!d.query.trim()) throw invalid('A job needs at least one statement', 'Empty job');
  // As MindsDB: a start in the past is now; without a repetition, an end means nothing.
  const startAt = d.startAt === null || d.startAt < now ? now : d.startAt;
  const endAt = d.every === null ? null : d.endAt;
  if (endAt !== null && endAt < startAt)
    throw invalid(
      `Wrong end date ${startAt.toISOString()} > ${endAt.toISOString()}: END must not be before START`,
      'Invalid schedule',
    );
  return [
    {
      type: 'JobCreated',
      data: {
        projectId: Number(project.id),
        project: project.name,
        name: d.name,
        query: d.query,
        ifQuery: d.ifQuery,
        startAt: startAt.toISOString(),
        endAt: endAt?.toISOString() ?? null,
        every: d.every,
        owner: d.owner,
        createdAt: at,
      },
    },
  ];
};

const deleteJob: Decide<'DeleteJob'> = (command, state, { project, at }) =>
  deletionByName(state.jobs, command.data, requireJob, (job) => jobDeleted(job, project, at));

export const decideJob = decideInProject<JobCommand, JobDecisionState, JobEvent>({
  CreateJob: createJob,
  DeleteJob: deleteJob,
});

/**
 * A job's runs, decided on their own stream. A tick is claimed once: a claim for a tick not after
 * the last claimed one decides nothing, so of processes racing for it (each appending expecting the
 * version it read) one records it and the others, deciding again on what the log holds, nothing.
 * A run still open when the next tick is claimed is abandoned if its lease ran out (its process
 * died), else the tick waits. Outcomes are recorded only by the claim that holds the run.
 */
export type JobRunCommand =
  | {
      type: 'ClaimRun';
      data: { jobId: bigint; projectId: bigint; tick: Date; claimId: string; node: string; leaseMs: number };
      metadata: Now;
    }
  | {
      type: 'RecordStatement';
      data: {
        claimId: string;
        index: number;
        query: string;
        outcome: 'ok' | 'rows' | 'error';
        rows: number | null;
        error: string | null;
      };
      metadata: Now;
    }
  | { type: 'FinishRun'; data: { claimId: string }; metadata: Now }
  | { type: 'FailRun'; data: { claimId: string; error: string }; metadata: Now }
  | { type: 'SkipRun'; data: { claimId: string; reason: string }; metadata: Now };

type RunCommand<T extends JobRunCommand['type']> = Extract<JobRunCommand, { type: T }>;

/** The open run, as its records name it: only the claim holding it records its statements and outcome. */
const heldRun = (
  command: RunCommand<Exclude<JobRunCommand['type'], 'ClaimRun'>>,
  state: JobRunsState,
  jobId: bigint,
) => {
  const { claimId } = command.data;
  if (state.open?.claimId !== claimId)
    throw conflict(
      `The claim ${claimId} on this job's run was lost (its lease ran out and the next run took over)`,
      'Claim lost',
    );
  return { jobId: Number(jobId), run: state.open.run, claimId };
};

/** The open run, abandoned when its lease ran out: its process died before it finished. */
const abandonedRun = (state: JobRunsState, jobId: bigint, at: string): JobRunAbandoned[] =>
  state.open === null
    ? []
    : [
        {
          type: 'JobRunAbandoned',
          data: {
            jobId: Number(jobId),
            run: state.open.run,
            claimId: state.open.claimId,
            reason: 'Its process stopped before the run finished (the claim lease ran out)',
            abandonedAt: at,
          },
        },
      ];

const claimRun = (command: RunCommand<'ClaimRun'>, state: JobRunsState, jobId: bigint): JobRunEvent[] => {
  const at = command.metadata.now.toISOString();
  const d = command.data;
  const now = command.metadata.now.getTime();
  if (state.lastTick !== null && d.tick.getTime() <= state.lastTick) return [];
  if (state.open !== null && state.open.leaseUntil > now) return [];
  const started: JobRunStarted = {
    type: 'JobRunStarted',
    data: {
      jobId: Number(jobId),
      projectId: Number(d.projectId),
      run: state.runs + 1,
      tick: d.tick.toISOString(),
      previousTick: state.lastTick === null ? null : new Date(state.lastTick).toISOString(),
      claimId: d.claimId,
      node: d.node,
      startedAt: at,
      leaseUntil: new Date(now + d.leaseMs).toISOString(),
    },
  };
  return [...abandonedRun(state, jobId, at), started];
};

const recordStatement = (
  command: RunCommand<'RecordStatement'>,
  state: JobRunsState,
  jobId: bigint,
): JobRunEvent[] => {
  const at = command.metadata.now.toISOString();
  const { claimId: _c, ...d } = command.data;
  return [{ type: 'JobStatementRan', data: { ...heldRun(command, state, jobId), ...d, at } }];
};

const finishRun = (command: RunCommand<'FinishRun'>, state: JobRunsState, jobId: bigint): JobRunEvent[] => [
  {
    type: 'JobRunFinished',
    data: { ...heldRun(command, state, jobId), finishedAt: command.metadata.now.toISOString() },
  },
];

const failRun = (command: RunCommand<'FailRun'>, state: JobRunsState, jobId: bigint): JobRunEvent[] => [
  {
    type: 'JobRunFailed',
    data: {
      ...heldRun(command, state, jobId),
      error: command.data.error,
      failedAt: command.metadata.now.toISOString(),
    },
  },
];

const skipRun = (command: RunCommand<'SkipRun'>, state: JobRunsState, jobId: bigint): JobRunEvent[] => [
  {
    type: 'JobRunSkipped',
    data: {
      ...heldRun(command, state, jobId),
      reason: command.data.reason,
      skippedAt: command.metadata.now.toISOString(),
    },
  },
];

export const decideJobRun = decideByType<JobRunCommand, JobRunsState, JobRunEvent, [jobId: bigint]>({
  ClaimRun: claimRun,
  RecordStatement: recordStatement,
  FinishRun: finishRun,
  FailRun: failRun,
  SkipRun: skipRun,
});
