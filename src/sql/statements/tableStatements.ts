import type { KnowledgeBaseRows } from '../handlers';
import { withinDeadline } from '../deadline';
import { SqlError, SqlErrorCode } from '../errors';
import type { FileWrites } from '../writes/fileWrites';
import { ok, type StatementContext, type StatementHandlers } from '../handlers';
import type { IntegrationWriteStatement, IntegrationWrites } from '../writes/integrationWrites';
import type { Introspection } from '../catalog/introspection';

/**
 * The statements the SQL interface answers itself, over every capability: SHOW, DESCRIBE, USE, SET,
 * and writes into tables, which go to the external database, file or knowledge base named (the
 * read model takes none).
 */
export const pipelineStatements = (deps: {
  readonly introspection: Introspection;
  readonly databaseExists: (name: string) => Promise<boolean>;
  readonly integrationWrites: IntegrationWrites;
  readonly fileWrites: FileWrites;
  readonly knowledgeBaseRows: KnowledgeBaseRows;
}) => {
  const { introspection, integrationWrites, fileWrites, knowledgeBaseRows } = deps;
  /** The write into the external database it names, or undefined when it names none. */
  const intoIntegration = async (statement: IntegrationWriteStatement, context: StatementContext) => {
    const integration = await integrationWrites.integrationOf(statement, context.db);
    return integration
      ? integrationWrites.run(statement, integration, context.db, context.sql, context.params)
      : undefined;
  };
  /** Rows go into external databases and files; into a project, only a knowledge base takes them. */
  const notExternal = (verb: string, statement: IntegrationWriteStatement, db: string) => {
    const { target } = statement;
    const where = `${target.project ?? db}.${target.name}`;
    return new SqlError(
      SqlErrorCode.Forbidden,
      `${verb} ${where} is not supported: ${target.project ?? db} is not an external database; projects' tables change only through commands, files through uploads and CREATE TABLE or INSERT INTO files.f (SELECT …); write into a database registered with CREATE DATABASE`,
    );
  };
  /** A write naming a database that is neither a project nor a registered one is told so (not that only knowledge bases take rows). */
  const inExistingDatabase = async <S extends IntegrationWriteStatement>(statement: S) => {
    const database = statement.target.project;
    if (database !== undefined && database !== null && !(await deps.databaseExists(database)))
      throw new SqlError(
        SqlErrorCode.UnknownDatabase,
        `Database ${database} does not exist: register it with CREATE DATABASE ${database} WITH ENGINE = …, PARAMETERS = {…}, or name a project's knowledge base`,
      );
    return statement;
  };
  return {
    Show: (statement, context) =>
      withinDeadline(
        introspection.show(statement, context.db, context.params, context.deadline),
        context.deadline,
      ),
    Describe: (statement, context) =>
      withinDeadline(introspection.describe(statement, context.db, context.deadline), context.deadline),
    Use: async (statement, context) => {
      if (!(await deps.databaseExists(statement.name)))
        throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${statement.name} does not exist`);
      context.use(statement.name);
      return ok;
    },
    Set: (statement) => introspection.set(statement.text),
    Insert: async (statement, context) =>
      (await intoIntegration(statement, context)) ??
      (fileWrites.isFileWrite(statement, context.db)
        ? fileWrites.run(statement, context.db, context.params)
        : knowledgeBaseRows.insert(await inExistingDatabase(statement), context)),
    Delete: async (statement, context) =>
      (await intoIntegration(statement, context)) ??
      knowledgeBaseRows.delete(await inExistingDatabase(statement), context),
    CreateTable: async (statement, context) => {
      const written = await intoIntegration(statement, context);
      if (written) return written;
      if (fileWrites.isFileWrite(statement, context.db))
        return fileWrites.run(statement, context.db, context.params);
      throw notExternal('CREATE TABLE', statement, context.db);
    },
    UpdateTable: async (statement, context) => {
      const written = await intoIntegration(statement, context);
      if (written) return written;
      throw notExternal('UPDATE', statement, context.db);
    },
    DropTable: async (statement, context) => {
      const written = await intoIntegration(statement, context);
      if (written) return written;
      throw notExternal('DROP TABLE', statement, context.db);
    },
  } satisfies StatementHandlers<
    'Show' | 'Describe' | 'Use' | 'Set' | 'Insert' | 'Delete' | 'CreateTable' | 'UpdateTable' | 'DropTable'
  >;
};
