import type { KnowledgeBasesService, RowsQuery } from './service';
import { knowledgeBaseDefinition } from './schemas';
import { evaluationOptions } from './evaluationSchemas';
import { evaluationColumnsOf } from './evaluation';
import { quoteMysqlIdent } from '../shared/quoting';
import { SqlError, SqlErrorCode } from '../sql/errors';
import type { QualifiedName } from '../sql/parse';
import {
  dropByName,
  evaluateByName,
  ownProject,
  ok,
  projectOf,
  type KnowledgeBaseRows,
  type StatementContext,
  type SqlCatalog,
  type SqlLookups,
  type StatementHandlers,
  type StatementOf,
} from '../sql/handlers';

type KnowledgeBases = Pick<
  KnowledgeBasesService,
  'exists' | 'create' | 'remove' | 'insertQuery' | 'deleteWhere' | 'evaluate' | 'index'
>;

const refused = (verb: string, target: QualifiedName) =>
  new SqlError(
    SqlErrorCode.Forbidden,
    `${verb} ${target.project ? `${target.project}.` : ''}${target.name} is not allowed: only knowledge bases take rows; the other tables are projections of the event log and change only through commands`,
  );

/**
 * The rows a knowledge base takes, named by the column list: `INSERT … VALUES` as a query DuckDB
 * answers itself, and a SELECT as written (it may be sent whole to a database), its columns named
 * once it has answered (`RowsQuery`).
 */
const rowsQuery = (columns: string[] | null, body: string): RowsQuery => {
  if (/^values\b/i.test(body)) {
    if (!columns)
      throw new SqlError(
        SqlErrorCode.Invalid,
        'INSERT … VALUES needs its column list: INSERT INTO kb (id, content) VALUES …',
      );
    return { sql: `SELECT * FROM (${body}) AS mindledger_rows(${columns.map(quoteMysqlIdent).join(', ')})` };
  }
  return columns ? { sql: body, columns } : { sql: body };
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
      const done = await kbs.insertQuery(project, definition.name, context.db, { sql: statement.from });
      return { type: 'ok', affected_rows: done.documents };
    },
    DropKnowledgeBase: dropByName(kbs.remove),
    /**
     * EVALUATE KNOWLEDGE_BASE p.kb USING test_table = db.t, …: one row of scores (with
     * `evaluate = false`, the generated questions instead).
     */
    EvaluateKnowledgeBase: evaluateByName(
      'KNOWLEDGE_BASE',
      evaluationOptions,
      async (project, options, s) => {
        const result = await kbs.evaluate(project, s.name.name, options);
        if (options.evaluate === false)
          return {
            type: 'table',
            column_names: ['question', 'doc_id', 'answer'],
            column_types: ['VARCHAR', 'VARCHAR', 'VARCHAR'],
            data: (result.generated ?? []).map((c) => [c.question, c.doc_id, c.answer]),
          };
        const columns = evaluationColumnsOf(result.version);
        return {
          type: 'table',
          column_names: columns.map(([n]) => n),
          column_types: columns.map(([, t]) => t),
          data: [columns.map(([n]) => result[n])],
        };
      },
    ),
    /**
     * CREATE INDEX ON KNOWLEDGE_BASE p.kb (MindsDB's, for its vector stores): its keyword index (each
     * chunk's terms, BM25) is written with every insert, unsorted; this records that it be compacted
     * into term order (an event, so a rebuild compacts at the same point). Its vectors are searched
     * exactly, a scan with no approximate index to make (docs/evaluate-and-replay.md).
     */
    CreateKnowledgeBaseIndex: async (statement, context) => {
      const project = projectOf(statement.name, context);
      if (!(await kbs.exists(project, statement.name.name)))
        throw new SqlError(
          SqlErrorCode.NotFound,
          `CREATE INDEX ON KNOWLEDGE_BASE ${project}.${statement.name.name}: knowledge base ${statement.name.name} not found in project ${project}`,
        );
      await kbs.index(project, statement.name.name);
      return ok;
    },
  }) satisfies StatementHandlers<
    'CreateKnowledgeBase' | 'DropKnowledgeBase' | 'EvaluateKnowledgeBase' | 'CreateKnowledgeBaseIndex'
  >;

/**
 * The two writes a knowledge base takes in a project: INSERT (its rows become documents) and DELETE
 * (the documents whose chunks match the condition). Any other INSERT or DELETE into a project is
 * refused: the read model changes only through commands.
 */
export const knowledgeBaseRows = (kbs: KnowledgeBases): KnowledgeBaseRows => ({
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
    // Every EVALUATE KNOWLEDGE_BASE, with the settings it ran with (src/knowledgeBases/evaluation.ts).
    KNOWLEDGE_BASE_EVALUATIONS: `SELECT ID, PROJECT, NAME, VERSION, TEST_TABLE, TEST_SET_DIGEST, QUESTIONS, GENERATED,
      TOTAL, TOTAL_FOUND, RETRIEVED_IN_TOP_10, CAST(CUMULATIVE_RECALL AS VARCHAR) AS CUMULATIVE_RECALL, AVG_QUERY_TIME,
      HIT_RATE, MRR, RECALL_AT_1, RECALL_AT_3, RECALL_AT_5, RECALL_AT_10, TOP_K, HYBRID_SEARCH_ALPHA,
      EMBEDDING_PROVIDER, EMBEDDING_MODEL, DIMENSIONS, CHUNK_SIZE, CHUNK_OVERLAP, DOCUMENTS, CHUNKS, CREATED_AT,
      AVG_RELEVANCY, CAST(AVG_RELEVANCE_SCORE_BY_K AS VARCHAR) AS AVG_RELEVANCE_SCORE_BY_K, AVG_FIRST_RELEVANT_POSITION,
      MEAN_MRR, CAST(HIT_AT_K AS VARCHAR) AS HIT_AT_K, CAST(BIN_PRECISION_AT_K AS VARCHAR) AS BIN_PRECISION_AT_K,
      AVG_ENTROPY, AVG_NDCG, JUDGE_PROVIDER, JUDGE_MODEL, SAVED_TO
      FROM main.knowledge_base_evaluations ORDER BY ID`,
  },
  projectTables: { knowledge_bases: 'KNOWLEDGE_BASES' },
  scopedRows: { knowledge_bases: ownProject, knowledge_base_evaluations: ownProject },
  // Each knowledge base's documents and evaluations (state.ts `documentsStream`).
  projectStreams: (ofProject) =>
    `stream IN (SELECT 'kb-' || ID FROM main.knowledge_bases WHERE ${ofProject})`,
} satisfies SqlCatalog;

/** A knowledge base queried as a table searches. */
export const knowledgeBaseLookup = (kbs: Pick<KnowledgeBasesService, 'exists'>) =>
  ({
    isKnowledgeBase: async (project, name) => (await kbs.exists(project, name))?.name,
  }) satisfies Pick<SqlLookups, 'isKnowledgeBase'>;
