import type { KnowledgeBaseRows, SqlCatalog, SqlLookups, StatementHandlers } from './handlers';
import type { TableReader } from '../projection/types';
import type { Registrations } from './statements/roles';
import type { pipelineStatements } from './statements/tableStatements';

/** The statement kinds the pipeline runs itself (SHOW, DESCRIBE, USE, SET, table writes). */
type PipelineKinds = keyof ReturnType<typeof pipelineStatements>;

/**
 * What the SQL service is handed of the capabilities by the composition root
 * (src/wiring/sqlSlices.ts), each already given the services it runs on, so that src/sql imports
 * none of them: each slice's `sql.ts` statements and name look-ups, and the two of their statements
 * REST runs through SQL. The statements' type is every kind the pipeline does not run itself, so a
 * kind the grammar makes and no slice handles does not compile there. `ModelAnswer`: what CREATE
 * MODEL answers REST (the models slice's view of the new model).
 */
export type SqlSlices<ModelAnswer> = {
  readonly statements: Omit<StatementHandlers, PipelineKinds>;
  readonly lookups: SqlLookups;
  /** Every slice's tables as SQL shows them, in the order SHOW TABLES lists a project's. */
  readonly catalogs: readonly SqlCatalog[];
  /** POST /api/projects/{p}/models: a CREATE MODEL statement's text, run as SQL runs it. */
  readonly createModelFromText: (project: string, query: string) => Promise<ModelAnswer>;
  /** The external databases' registrations, whose relations alone a read-only caller reads. */
  readonly registrations: (reader: TableReader) => Promise<Registrations>;
  /** INSERT INTO / DELETE FROM a knowledge base. */
  readonly knowledgeBaseRows: KnowledgeBaseRows;
};
