import type { DatabasesService } from './service';
import { ok, unlessMissing, validName, type SqlLookups, type StatementHandlers } from '../sql/handlers';

type DatabaseSqlPorts = {
  readonly databases: Pick<DatabasesService, 'exists' | 'create' | 'remove'>;
  /** `CREATE DATABASE d` without an engine makes a project, as in MindsDB. */
  readonly createProject: (name: string) => Promise<unknown>;
};

/** CREATE DATABASE and DROP DATABASE [FORGET], through the databases service (as REST). */
export const databaseStatements = ({ databases, createProject }: DatabaseSqlPorts) =>
  ({
    CreateDatabase: async (statement) => {
      if (statement.ifNotExists && (await databases.exists(statement.name))) return ok;
      if (!statement.engine) {
        await createProject(validName('Project', statement.name));
        return ok;
      }
      await databases.create({
        name: validName('Database', statement.name),
        engine: statement.engine,
        parameters: statement.parameters ?? {},
      });
      return ok;
    },
    DropDatabase: async (statement) => {
      if (statement.ifExists && !statement.forget && !(await databases.exists(statement.name))) return ok;
      await unlessMissing(statement.ifExists, () =>
        databases.remove(statement.name, undefined, { forget: statement.forget }),
      );
      return ok;
    },
  }) satisfies StatementHandlers<'CreateDatabase' | 'DropDatabase'>;

/** An integration's canonical name (an external database or a chat channel). */
export const integrationLookup = (databases: Pick<DatabasesService, 'findIntegration'>) =>
  ({
    isIntegration: async (name) => (await databases.findIntegration(name))?.name,
  }) satisfies Pick<SqlLookups, 'isIntegration'>;
