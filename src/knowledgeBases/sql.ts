import type { KnowledgeBasesService } from './service';
import { knowledgeBaseDefinition } from './schemas';
import { quoteMysqlIdent } from '../shared/quoting';
import { SqlError, SqlErrorCode } from '../sql/errors';
import type { QualifiedName } from '../sql/parse';
import {
  ownProject,
  ok,
  projectOf,
  type StatementContext,
  type SqlCatalog,
  type SqlLookups,
  type StatementHandlers,
  type StatementOf,
} from '../sql/handlers';

type KnowledgeBases = Pick<
  KnowledgeBasesService,
  'exists' | 'create' | 'remove' | 'insertQuery' | 'deleteWhere'
>;

const refused = (verb: string, target: QualifiedName) =>
  new SqlError(
    SqlErrorCode.Forbidden,
    `${verb} ${target.project ? `${target.project}.` : ''}${target.name} is not allowed: only knowledge bases take rows; the other tables are projections of the event log and change only through commands`,
  );

/** `INSERT … VALUES` as a query: the rows a knowledge base takes, named by the column list. */
const rowsQuery = (columns: string[] | null, body: string) => {
  const named = columns
    ? ` AS mindledger_rows(${columns.map(quoteMysqlIdent).join(', ')})`
    : ' AS mindledger_rows';
  if (/^values\b/i.test(body)) {
    if (!columns)
      throw new SqlError(
        SqlErrorCode.Invalid,
        'INSERT … VALUES needs its column list: INSERT INTO kb (id, content) VALUES …',
      );
    return `SELECT * FROM (${body})${named}`;
  }
  return columns ? `SELECT * FROM (${body})${named}` : body;
};

/** CREATE [OR REPLACE] KNOWLEDGE_BASE [FROM (SELECT …)] and DROP KNOWLEDGE_BASE [FORGET]. */
export const knowledgeBaseStatements = (kbs: KnowledgeBases) =>
  ({
    CreateKnowledgeBase: async (statement, context) => {
      const project = projectOf(statement.name, context);
      const definition = knowledgeBaseDefinition(statement.name.name, statement.options);
      if (statement.replace) await kbs.remove(project, definition.name, true);
      await kbs.create(project, { ...definition, ifNotExists: statement.ifNotExists });
      if (!statement.from) return ok;
      const done = await kbs.insertQuery(project, definition.name, context.db, statement.from);
      return { type: 'ok', affected_rows: done.documents };
    },
    DropKnowledgeBase: async (statement, context) => {
      await kbs.remove(projectOf(statement.name, context), statement.name.name, statement.ifExists, {
        forget: statement.forget,
      });
      return ok;
    },
  }) satisfies StatementHandlers<'CreateKnowledgeBase' | 'DropKnowledgeBase'>;

/**
 * The two writes a knowledge base takes in a project: INSERT (its rows become documents) and DELETE
 * (the documents whose chunks match the condition). Any other INSERT or DELETE into a project is
 * refused: the read model changes only through commands.
 */
export const knowledgeBaseRows = (kbs: KnowledgeBases) => ({
  insert: async (statement: StatementOf<'Insert'>, context: StatementContext) => {
    const kb = await kbs.exists(projectOf(statement.target, context), statement.target.name);
    if (!kb) throw refused('INSERT INTO', statement.target);
    const done = await kbs.insertQuery(
      kb.project,
      kb.name,
      context.db,
      rowsQuery(statement.columns, statement.body),
    );
    return { type: 'ok' as const, affected_rows: done.documents };
  },
  delete: async (statement: StatementOf<'Delete'>, context: StatementContext) => {
    const kb = await kbs.exists(projectOf(statement.target, context), statement.target.name);
    if (!kb) throw refused('DELETE FROM', statement.target);
    const deleted = await kbs.deleteWhere(kb.project, kb.name, context.db, statement.where);
    return { type: 'ok' as const, affected_rows: deleted };
  },
});

export type KnowledgeBaseRows = ReturnType<typeof knowledgeBaseRows>;

/** information_schema.KNOWLEDGE_BASES, and every project's knowledge_bases table. */
export const knowledgeBaseCatalog = {
  informationSchema: {
    // PARAMS carries the columns too: the JS SDK reads metadata_columns, content_columns and id_column there.
    KNOWLEDGE_BASES: `SELECT NAME, PROJECT, CAST(EMBEDDING_MODEL AS VARCHAR) AS EMBEDDING_MODEL,
      NULL::VARCHAR AS RERANKING_MODEL, NULL::VARCHAR AS STORAGE, CAST(METADATA_COLUMNS AS VARCHAR) AS METADATA_COLUMNS,
      CAST(CONTENT_COLUMNS AS VARCHAR) AS CONTENT_COLUMNS, ID_COLUMN,
      CAST(json_merge_patch(PARAMS, json_object('metadata_columns', METADATA_COLUMNS,
        'content_columns', CONTENT_COLUMNS, 'id_column', ID_COLUMN)) AS VARCHAR) AS PARAMS,
      INSERT_STARTED_AT, INSERT_FINISHED_AT, PROCESSED_ROWS, NULL::VARCHAR AS ERROR, NULL::BIGINT AS QUERY_ID
      FROM main.knowledge_bases ORDER BY ID`,
  },
  projectTables: { knowledge_bases: 'KNOWLEDGE_BASES' },
  scopedRows: { knowledge_bases: ownProject },
} satisfies SqlCatalog;

/** A knowledge base queried as a table searches. */
export const knowledgeBaseLookup = (kbs: Pick<KnowledgeBasesService, 'exists'>) =>
  ({
    isKnowledgeBase: async (project, name) => (await kbs.exists(project, name))?.name,
  }) satisfies Pick<SqlLookups, 'isKnowledgeBase'>;
