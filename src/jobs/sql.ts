import type { JobsService } from './service';
import { byName, dropByName, ownProject, type SqlCatalog, type StatementHandlers } from '../sql/handlers';

/** CREATE JOB and DROP JOB [FORGET], through the jobs service (the same commands as REST). */
export const jobStatements = (jobs: Pick<JobsService, 'create' | 'remove'>) =>
  ({
    CreateJob: byName((project, name, statement) =>
      jobs.create(project, {
        name,
        query: statement.query,
        ifQuery: statement.ifQuery,
        startAt: statement.start,
        endAt: statement.end,
        every: statement.every,
        ifNotExists: statement.ifNotExists,
      }),
    ),
    DropJob: dropByName(jobs.remove),
  }) satisfies StatementHandlers<'CreateJob' | 'DropJob'>;

/** information_schema.JOBS, JOBS_HISTORY and JOB_RUNS, and every project's jobs and jobs_history. */
export const jobCatalog = {
  informationSchema: {
    JOBS: `SELECT NAME, PROJECT, START_AT, END_AT, NEXT_RUN_AT, SCHEDULE_STR, QUERY, IF_QUERY,
      CAST(VARIABLES AS VARCHAR) AS VARIABLES FROM main.jobs ORDER BY ID`,
    // MindsDB's jobs_history (a project's table, and log.jobs_history); JOB_RUNS adds status and tick.
    JOBS_HISTORY: `SELECT NAME, PROJECT, RUN_START, RUN_END, ERROR, QUERY FROM main.job_runs ORDER BY POSITION`,
    JOB_RUNS: `SELECT NAME, PROJECT, RUN, STATUS, TICK AS SCHEDULED_AT, RUN_START, RUN_END, STATEMENTS, ERROR, QUERY, NODE
      FROM main.job_runs ORDER BY POSITION`,
  },
  projectTables: { jobs: 'JOBS', jobs_history: 'JOBS_HISTORY' },
  scopedRows: { jobs: ownProject, job_runs: ownProject },
  // Each job's runs (state.ts `jobRunsStream`).
  projectStreams: (ofProject) => `stream IN (SELECT 'job-runs-' || ID FROM main.jobs WHERE ${ofProject})`,
} satisfies SqlCatalog;
