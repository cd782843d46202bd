import type { ProjectsService } from './service';
import { ok, validName, type SqlLookups, type StatementHandlers } from '../sql/handlers';

/** CREATE PROJECT and DROP PROJECT, through the projects service (the same commands as REST). */
export const projectStatements = (projects: Pick<ProjectsService, 'find' | 'create' | 'remove'>) =>
  ({
    CreateProject: async (statement) => {
      if (statement.ifNotExists && (await projects.find(statement.name))) return ok;
      await projects.create(validName('Project', statement.name));
      return ok;
    },
    DropProject: async (statement) => {
      if (statement.ifExists && !(await projects.find(statement.name))) return ok;
      await projects.remove(statement.name);
      return ok;
    },
  }) satisfies StatementHandlers<'CreateProject' | 'DropProject'>;

/** A project's canonical name, for the SQL interface's name resolution. */
export const projectLookup = (projects: Pick<ProjectsService, 'find'>) =>
  ({
    isProject: async (name) => (await projects.find(name))?.name,
  }) satisfies Pick<SqlLookups, 'isProject'>;
