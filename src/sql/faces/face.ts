import type { DuckDBConnection } from '@duckdb/node-api';
import type { AstNode } from '../pipeline/ast';
import type { CatalogResolver } from '../catalog/catalog';
import type { CatalogFace } from '../catalog/catalogListing';
import type { KnowledgeBaseRef } from './knowledgeBase/knowledgeBaseTables';

/**
 * Everything a query can name in `FROM` is one of a few kinds, each a face in its own folder
 * (`src/sql/faces/<kind>/face.ts`) and listed once, in order, in `TABLE_FACES`
 * (src/sql/faces/index.ts): the planner asks each face in turn whether a name is of its kind, and
 * what it recognises goes to one of the plan's four places (`Recognised`), which is all the plan
 * and the run need to know of it. Views are put in place of their names before faces are asked
 * (src/sql/faces/view), and `LLM()` is a function face (src/sql/faces/llm/face.ts).
 */

/** A table of an external database the query reads, before it is copied or pushed down. */
export type ExternalRef = {
  node: AstNode;
  integration: string;
  schema: string | null;
  table: string;
  native?: string;
};

/** A table whose rows are computed: a model's predictions, or an agent's answers. */
export type ComputedRef = { node: AstNode; project: string; name: string; kind: 'model' | 'agent' };

/** One table reference as the query wrote it, checked against the caller's policy already. */
export type TableName = {
  node: AstNode;
  /** DuckDB's catalog part: `project.model.3` and `integration.schema.table` have one. */
  catalog: string;
  schema: string;
  table: string;
  /** The database the name is in: its schema part, else the session's. */
  database: string;
  /** `FROM integration ( … )`: the native query's integration and text. */
  native?: { integration: string; sql: string };
  /** A resource table AS OF a log position (src/sql/pipeline/asOf.ts). */
  asOf?: { table: string; position: bigint };
};

export type FaceContext = {
  c: DuckDBConnection;
  catalog: CatalogResolver;
  /** A project-scoped caller's project (src/sql/pipeline/plan.ts, TablePolicy). */
  project: string | undefined;
  /** Registers an AS OF query; answers the placeholder the query reads it by. */
  addAsOf(query: string): string;
};

/** Where a recognised name goes in the plan: each kind of plan reads these four. */
export type Recognised =
  | { place: 'external'; ref: ExternalRef }
  | { place: 'computed'; ref: ComputedRef }
  | { place: 'search'; ref: KnowledgeBaseRef }
  /** Read from DuckDB as it is now named; `listing`: an information_schema face that lists external relations too. */
  | { place: 'local'; listing?: CatalogFace };

export type TableFace = {
  readonly kind:
    'native' | 'history' | 'agent' | 'knowledgeBase' | 'model' | 'integration' | 'file' | 'system';
  /** What `name` is when it is of this face's kind (undefined: the next face's turn); may throw a refusal. */
  recognise(name: TableName, context: FaceContext): Promise<Recognised | undefined>;
};

/** Reads `node` as a physical DuckDB table (its qualifier dropped: DuckDB never looks a bare name up). */
export const readLocally = (node: AstNode, schema: string, table: string) => {
  node.schema_name = schema;
  node.table_name = table;
  node.catalog_name = '';
};
