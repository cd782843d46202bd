import type { AppContext } from '../context';
import { resourceRun, type RemoveByName } from '../projectCommand';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { invalid, notFound } from '../shared/errors';
import type { Unstamped } from '../shared/params';
import { actorName, currentRequest } from '../shared/requestContext';
import { decideJob, type JobCommand } from './decider';
import { presentJob, presentJobRun } from './present';
import { jobRowByName, jobRowsOfProject, jobRunRowsOf } from './projection';
import { parseEvery, parseJobDate } from './schedule';
import { jobRunsStream } from './state';
import { splitStatements } from './statements';

/** A new job as SQL's CREATE JOB and REST's POST send it (dates as written). */
type NewJob = {
  name: string;
  query: string;
  ifQuery: string | null;
  startAt: string | null;
  endAt: string | null;
  /** `EVERY [n] unit` as written; none: the job runs once. */
  every: { n: number | null; unit: string } | null;
  ifNotExists?: boolean;
};

/** What a job's statements are checked with when it is made: why one would not parse, or null. */
type JobStatementCheck = (statement: string) => string | null;

/** Reads come from the `jobs` and `job_runs` projections; definitions live in the project's stream. */
export const jobsService = (ctx: AppContext, projects: ProjectDirectory, check: JobStatementCheck) => {
  /** Refuses a job whose statements (or IF query) would not parse, naming the first that would not. */
  const checkStatements = (job: NewJob) => {
    const statements = splitStatements(job.query);
    if (statements.length === 0) throw invalid('A job needs at least one statement', 'Empty job');
    for (const statement of [...statements, ...(job.ifQuery === null ? [] : [job.ifQuery])]) {
      const problem = check(statement);
      if (problem !== null)
        throw invalid(`Unable to parse: ${statement}: ${problem}`, 'Invalid job statement');
    }
  };

  const findRow = async (projectName: string, name: string) => {
    const project = await projects.require(projectName);
    const row = await jobRowByName(ctx.duck, project.id, name);
    if (!row) throw notFound(`Job with name ${name} does not exist`, 'Job not found');
    return row;
  };

  /** `now`: the time the caller read; `forget`: a delete forgets the job's secrets too (crypto-shredding). */
  const run = resourceRun<Unstamped<JobCommand>>(ctx, projects, {
    decide: decideJob,
    answer: 'settled',
    deletedBy: 'JobDeleted',
  });

  /** Creates a job; its statements will run as the caller would run them. */
  const create = async (projectName: string, job: NewJob) => {
    checkStatements(job);
    const now = ctx.clock();
    const request = currentRequest();
    const principal = request?.principal;
    const { project } = await run(
      projectName,
      {
        type: 'CreateJob',
        data: {
          name: job.name,
          query: job.query,
          ifQuery: job.ifQuery,
          startAt: job.startAt === null ? null : parseJobDate(job.startAt, now, 'START'),
          endAt: job.endAt === null ? null : parseJobDate(job.endAt, now, 'END'),
          every: job.every === null ? null : parseEvery(job.every.n, job.every.unit),
          owner: {
            actor: request?.actor ? actorName(request.actor) : null,
            user: principal?.user ?? null,
            role: principal?.role ?? null,
            project: principal?.project ?? null,
          },
          ifNotExists: job.ifNotExists ?? false,
        },
      },
      { now },
    );
    return presentJob(await findRow(project, job.name));
  };

  /**
   * `forget`: the secrets its statements hold (sealed in the log, src/shared/sqlOptions.ts) are
   * forgotten too, in its definition and in the statements its runs recorded (crypto-shredding).
   */
  const remove: RemoveByName = async (projectName, name, ifExists, options = {}) => {
    const outcome = await run(projectName, { type: 'DeleteJob', data: { name, ifExists } }, options);
    const deleted = outcome.events.find((e) => e.type === 'JobDeleted');
    if (!options.forget || deleted?.type !== 'JobDeleted') return;
    // A run's recorded statements name no resource: they were sealed under the runs stream's own key.
    await ctx.secrets.forget(
      { stream: jobRunsStream(BigInt(deleted.data.jobId)), eventType: 'JobStatementRan', name: '' },
      `job ${deleted.data.name} of ${outcome.project} deleted with forget`,
    );
  };

  return {
    create,
    remove,
    list: async (projectName: string) => {
      const project = await projects.require(projectName);
      return (await jobRowsOfProject(ctx.duck, project.id)).map(presentJob);
    },
    get: async (projectName: string, name: string) => presentJob(await findRow(projectName, name)),
    history: async (projectName: string, name: string) => {
      const row = await findRow(projectName, name);
      return (await jobRunRowsOf(ctx.duck, row.ID)).map(presentJobRun);
    },
  };
};

export type JobsService = ReturnType<typeof jobsService>;
