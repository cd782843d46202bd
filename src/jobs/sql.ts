import type { JobsService } from './service';
import { ok, projectOf, type StatementHandlers } from '../sql/handlers';

/** CREATE JOB and DROP JOB [FORGET], through the jobs service (the same commands as REST). */
export const jobStatements = (jobs: Pick<JobsService, 'create' | 'remove'>) =>
  ({
    CreateJob: async (statement, context) => {
      await jobs.create(projectOf(statement.name, context), {
        name: statement.name.name,
        query: statement.query,
        ifQuery: statement.ifQuery,
        startAt: statement.start,
        endAt: statement.end,
        every: statement.every,
        ifNotExists: statement.ifNotExists,
      });
      return ok;
    },
    DropJob: async (statement, context) => {
      await jobs.remove(projectOf(statement.name, context), statement.name.name, statement.ifExists, {
        forget: statement.forget,
      });
      return ok;
    },
  }) satisfies StatementHandlers<'CreateJob' | 'DropJob'>;
