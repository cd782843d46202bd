import crypto from 'node:crypto';
import os from 'node:os';
import type { JobEvery, JobOwner, RecordedEvent } from '../../events';
import { settled, type AppContext } from '../context';
import type { ProjectAggregate } from '../shared/projectState';
import { messageOf, unlessClaimLost } from '../shared/errors';
import { withRequest } from '../shared/requestContext';
import type { OwnerRights } from '../shared/ownerRights';
import { decideJobRun, type JobRunCommand } from './decider';
import { dueJobRows, type JobRow } from './projection';
import { dueTick, type JobSchedule } from './schedule';
import { jobRunsAggregate, jobRunsStream } from './state';
import { fillVariables, splitStatements } from './statements';

/** How one statement of a job went, as the SQL service answered it. */
type StatementOutcome =
  | { outcome: 'ok'; rows: number | null; error: null }
  | { outcome: 'rows'; rows: number; error: null }
  | { outcome: 'error'; rows: null; error: string };

/**
 * The SQL service as a job needs it: one statement, in the job's project, as the request in context;
 * and its owner's rights at this run (src/users/owners.ts).
 */
type JobSqlPort = {
  execute(sql: string, project: string): Promise<StatementOutcome>;
  ownerRights(owner: JobOwner): Promise<OwnerRights>;
  /** A project's state as its stream holds it (the job's statements unmasked), folded by the composition root. */
  project(name: string): Promise<ProjectAggregate>;
};

type JobSchedulerOptions = {
  /** How long a run's claim holds: a run still open after it is abandoned by the next tick's claim. */
  readonly leaseMs: number;
  /** How often due jobs are looked for (0: never on its own; `tick()` is called by hand). */
  readonly pollMs: number;
};

const jsonValue = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

const scheduleOf = (row: JobRow): JobSchedule => ({
  startAt: row.START_AT.getTime(),
  endAt: row.END_AT === null ? null : row.END_AT.getTime(),
  every: jsonValue<JobEvery | null>(row.EVERY),
});

/** A step of the run, on its stream; null when the claim was lost (the run was taken over). */
const recordStep = async (ctx: AppContext, jobId: bigint, command: JobRunCommand) =>
  (
    await unlessClaimLost(
      ctx.commands.run(jobRunsStream(jobId), jobRunsAggregate, (s) => decideJobRun(command, s, jobId)),
    )
  )?.lastPosition ?? null;

/** Claims `tick` for the job: the run's start event when this process won it, else null. */
const claimRun = async (
  ctx: AppContext,
  row: JobRow,
  claim: { tick: number; claimId: string; node: string; leaseMs: number },
) => {
  const { tick, claimId, node, leaseMs } = claim;
  const outcome = await ctx.commands.run(jobRunsStream(row.ID), jobRunsAggregate, (s) =>
    decideJobRun(
      {
        type: 'ClaimRun',
        data: { jobId: row.ID, projectId: row.PROJECT_ID, tick: new Date(tick), claimId, node, leaseMs },
        metadata: { now: ctx.clock() },
      },
      s,
      row.ID,
    ),
  );
  const started = outcome.events.find(
    (e): e is Extract<RecordedEvent, { type: 'JobRunStarted' }> => e.type === 'JobRunStarted',
  );
  return started && started.data.claimId === claimId ? started : null;
};

/** One claimed run, as `executeRun` needs it. */
type ClaimedRun = {
  row: JobRow;
  /** The job's statements as the log holds them: the read model's copy has its secrets masked. */
  job: { query: string; ifQuery: string | null };
  claimId: string;
  tick: Date;
  previous: Date;
  /** Why the owner's rights shrank since the job was made (said beside a refusal), or null. */
  demoted: string | null;
};

/**
 * Runs the claimed run: IF first, then each statement until one fails. Returns the last position
 * (null once stopped or the claim was lost).
 */
const executeRun = async (ctx: AppContext, sql: JobSqlPort, run: ClaimedRun, stopped: AbortSignal) => {
  const { row, job, claimId, demoted } = run;
  const at = () => ({ now: ctx.clock() });
  const fill = (text: string) => fillVariables(text, { tick: run.tick, previous: run.previous });
  if (job.ifQuery !== null) {
    const condition = await sql.execute(fill(job.ifQuery), row.PROJECT);
    const reason =
      condition.outcome === 'error'
        ? `The IF query failed: ${condition.error}`
        : condition.outcome === 'rows' && condition.rows > 0
          ? null
          : 'The IF query returned no rows';
    if (reason !== null)
      return recordStep(ctx, row.ID, { type: 'SkipRun', data: { claimId, reason }, metadata: at() });
  }
  for (const [index, text] of splitStatements(job.query).entries()) {
    if (stopped.aborted) return null;
    const query = fill(text);
    let result: StatementOutcome;
    try {
      result = await sql.execute(query, row.PROJECT);
    } catch (error) {
      result = { outcome: 'error', rows: null, error: messageOf(error) };
    }
    const kept = await recordStep(ctx, row.ID, {
      type: 'RecordStatement',
      data: { claimId, index, query, ...result },
      metadata: at(),
    });
    if (kept === null) return null;
    if (result.outcome === 'error')
      return recordStep(ctx, row.ID, {
        type: 'FailRun',
        data: { claimId, error: demoted === null ? result.error : `${demoted}: ${result.error}` },
        metadata: at(),
      });
  }
  return recordStep(ctx, row.ID, { type: 'FinishRun', data: { claimId }, metadata: at() });
};

/** What firing a job needs of its scheduler. */
type FiringDeps = {
  readonly ctx: AppContext;
  readonly sql: JobSqlPort;
  readonly node: string;
  readonly leaseMs: number;
  readonly stopped: AbortSignal;
};

/** Claims and runs one job's due tick, as the job: its actor, and its creator's rights. */
const fireJob = async ({ ctx, sql, node, leaseMs, stopped }: FiringDeps, row: JobRow, tick: number) => {
  const claimId = crypto.randomUUID();
  const started = await claimRun(ctx, row, { tick, claimId, node, leaseMs });
  if (!started) return;
  // The owner as they are now: gone, or their token revoked or expired, the run fails unrun.
  const rights = await sql.ownerRights(jsonValue<JobOwner>(row.OWNER));
  const principal = 'refused' in rights ? undefined : rights.principal;
  const job = (await sql.project(row.PROJECT)).jobs.get(row.ID);
  const last = await withRequest(
    {
      requestId: `job-${row.ID}-${started.data.run}`,
      interface: 'job',
      actor: { kind: 'system', id: `job:${row.ID}` },
      ...(principal ? { principal } : {}),
    },
    () =>
      'refused' in rights || job === undefined
        ? recordStep(ctx, row.ID, {
            type: 'FailRun',
            data: {
              claimId,
              error: 'refused' in rights ? rights.refused : `The job ${row.NAME} no longer exists`,
            },
            metadata: { now: ctx.clock() },
          })
        : executeRun(
            ctx,
            sql,
            {
              row,
              job,
              claimId,
              tick: new Date(tick),
              previous:
                started.data.previousTick === null ? row.CREATED_AT : new Date(started.data.previousTick),
              demoted: rights.demoted,
            },
            stopped,
          ),
  );
  // Whoever asked for this tick reads its outcome (and the job's next run) at once.
  await settled(ctx, last ?? started.meta.position);
};

/**
 * Fires due jobs. Every process runs one; they share the work through the log: a run is claimed for
 * a tick on the job's runs stream (decider.ts), and only the process whose claim was recorded runs
 * the statements, each outcome recorded under that claim. The clock is the context's, so specs move
 * time by hand and call `tick()`.
 */
export const jobScheduler = (
  ctx: AppContext,
  sql: JobSqlPort,
  options: JobSchedulerOptions,
  node = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`,
) => {
  const working = new Set<bigint>();
  const tasks = new Set<Promise<void>>();
  const stopped = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const firing: FiringDeps = { ctx, sql, node, leaseMs: options.leaseMs, stopped: stopped.signal };

  /** Looks for due jobs now, and runs those this process wins; resolves when they are done. */
  const tick = async () => {
    if (stopped.signal.aborted) return;
    const now = ctx.clock();
    const rows = await dueJobRows(ctx.duck, now);
    const runs: Promise<void>[] = [];
    for (const row of rows) {
      if (working.has(row.ID)) continue;
      const due = dueTick(
        scheduleOf(row),
        row.LAST_TICK === null ? null : row.LAST_TICK.getTime(),
        now.getTime(),
      );
      if (due === null) continue;
      working.add(row.ID);
      const task = fireJob(firing, row, due)
        .catch((error: unknown) => {
          if (!stopped.signal.aborted)
            ctx.logger.error({ err: error, job: String(row.ID) }, 'job run failed');
        })
        .finally(() => {
          working.delete(row.ID);
          tasks.delete(task);
        });
      tasks.add(task);
      runs.push(task);
    }
    await Promise.all(runs);
  };

  let ticking: Promise<void> | null = null;
  const poll = () => {
    if (ticking || stopped.signal.aborted) return;
    ticking = tick()
      .catch((error: unknown) => ctx.logger.warn({ err: error }, 'job scheduler scan failed'))
      .finally(() => {
        ticking = null;
      });
  };

  return {
    node,
    tick,
    start: () => {
      if (options.pollMs <= 0) return;
      timer = setInterval(poll, options.pollMs);
      timer.unref();
    },
    /** Stops claiming; a run in progress records no further statement (its claim lapses). */
    stop: async () => {
      stopped.abort();
      if (timer) clearInterval(timer);
      await Promise.allSettled([...tasks, ticking]);
    },
  };
};

export type JobScheduler = ReturnType<typeof jobScheduler>;
