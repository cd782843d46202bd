import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const jobResource: ResourceDeclaration = { kind: 'job', id: 'jobId' };
const jobRunResource: ResourceDeclaration = { kind: 'jobRun', id: 'jobId' };

/** A job's repetition: every `n` units (MindsDB's `EVERY 2 hours`). */
export const jobEvery = z.object({
  n: z.number().int().min(1),
  unit: z.enum(['minute', 'hour', 'day', 'week', 'month']),
});

/**
 * Who made the job: its statements run as they would for them (their role, their project scope),
 * recorded as the job's own actor (`system:job:<id>`). Null fields: authentication was off.
 */
const jobOwner = z.object({
  actor: z.string().nullable(),
  user: z.string().nullable(),
  role: z.enum(['admin', 'editor', 'analyst', 'auditor']).nullable(),
  project: z.string().nullable(),
});

export const JobCreated = defineEvent(
  'JobCreated',
  z.object({
    projectId: z.number().int(),
    project: z.string(),
    name: z.string(),
    /** The statements as written, separated by `;`. */
    query: z.string(),
    /** `IF (SELECT …)`: a run is skipped when it returns no rows. */
    ifQuery: z.string().nullable(),
    startAt: z.iso.datetime(),
    /** After this, no run starts. Always null without `every` (a job without it runs once). */
    endAt: z.iso.datetime().nullable(),
    every: jobEvery.nullable(),
    owner: jobOwner,
    createdAt: z.iso.datetime(),
  }),
  { resource: jobResource },
);
export const JobDeleted = defineEvent(
  'JobDeleted',
  z.object({
    projectId: z.number().int(),
    jobId: z.number().int(),
    name: z.string(),
    deletedAt: z.iso.datetime(),
  }),
  { resource: jobResource },
);

/**
 * The runs of one job, on a stream of their own (`job-runs-<job id>`): a run is claimed for one
 * scheduled tick by appending this, expecting the stream's version, so of two processes only one
 * records it; a tick not after the last claimed one is never claimed again.
 */
export const JobRunStarted = defineEvent(
  'JobRunStarted',
  z.object({
    jobId: z.number().int(),
    projectId: z.number().int(),
    /** 1 for the job's first run. */
    run: z.number().int().min(1),
    /** The scheduled time this run is for (missed ticks collapse into the latest one). */
    tick: z.iso.datetime(),
    /** The tick of the run before (null for the first): `{{PREVIOUS_START_DATETIME}}`. */
    previousTick: z.iso.datetime().nullable(),
    claimId: z.string(),
    node: z.string(),
    startedAt: z.iso.datetime(),
    /** Until when the claim holds: a run still open after it is abandoned by the next claim. */
    leaseUntil: z.iso.datetime(),
  }),
  { resource: jobRunResource },
);
const runRef = { jobId: z.number().int(), run: z.number().int().min(1), claimId: z.string() };
export const JobStatementRan = defineEvent(
  'JobStatementRan',
  z.object({
    ...runRef,
    /** 0-based, in the job's order. */
    index: z.number().int().min(0),
    query: z.string(),
    outcome: z.enum(['ok', 'rows', 'error']),
    /** Rows answered (`rows`) or affected (`ok`, when known). */
    rows: z.number().int().nullable(),
    error: z.string().nullable(),
    at: z.iso.datetime(),
  }),
  { resource: jobRunResource },
);
export const JobRunFinished = defineEvent(
  'JobRunFinished',
  z.object({ ...runRef, finishedAt: z.iso.datetime() }),
  { resource: jobRunResource },
);
/** A statement failed: the ones after it did not run (MindsDB stops at the first error). */
export const JobRunFailed = defineEvent(
  'JobRunFailed',
  z.object({ ...runRef, error: z.string(), failedAt: z.iso.datetime() }),
  { resource: jobRunResource },
);
/** `IF (…)` returned no rows (or failed): the statements did not run this tick. */
export const JobRunSkipped = defineEvent(
  'JobRunSkipped',
  z.object({ ...runRef, reason: z.string(), skippedAt: z.iso.datetime() }),
  { resource: jobRunResource },
);
/** The run's process stopped answering (its lease ran out): the next claim closes it. */
export const JobRunAbandoned = defineEvent(
  'JobRunAbandoned',
  z.object({ ...runRef, reason: z.string(), abandonedAt: z.iso.datetime() }),
  { resource: jobRunResource },
);

export type JobCreated = EventOf<typeof JobCreated>;
export type JobDeleted = EventOf<typeof JobDeleted>;
export type JobRunStarted = EventOf<typeof JobRunStarted>;
export type JobStatementRan = EventOf<typeof JobStatementRan>;
export type JobRunFinished = EventOf<typeof JobRunFinished>;
export type JobRunFailed = EventOf<typeof JobRunFailed>;
export type JobRunSkipped = EventOf<typeof JobRunSkipped>;
export type JobRunAbandoned = EventOf<typeof JobRunAbandoned>;
export type JobEvery = z.infer<typeof jobEvery>;
export type JobOwner = z.infer<typeof jobOwner>;
export type JobEvent = JobCreated | JobDeleted;
export type JobRunEvent =
  JobRunStarted | JobStatementRan | JobRunFinished | JobRunFailed | JobRunSkipped | JobRunAbandoned;
export const jobContracts = [
  JobCreated,
  JobDeleted,
  JobRunStarted,
  JobStatementRan,
  JobRunFinished,
  JobRunFailed,
  JobRunSkipped,
  JobRunAbandoned,
] as const;
