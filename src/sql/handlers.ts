import { resourceName } from '../shared/names';
import { invalid, isNotFoundError } from '../shared/errors';
import type { Params } from '../shared/params';
import type { OkAnswer, TableAnswer } from './answers';
import type { Deadline } from './deadline';
import type { MindsStatement, QualifiedName, UsingValue } from './parse';

/**
 * What a capability offers the SQL interface: one handler per statement kind it owns, exported from
 * its slice's `sql.ts` and listed once in `src/wiring/sqlSlices.ts`. The pipeline (tokenize, parse, check
 * the caller's role, then dispatch) calls them through `StatementHandlers`, a map complete by type:
 * a statement the grammar makes without a handler does not compile.
 */
export type StatementKindName = MindsStatement['kind'];
export type StatementOf<K extends StatementKindName> = Extract<MindsStatement, { kind: K }>;

/** Where a statement runs: the client's current database, its text and bound values, its deadline. */
export type StatementContext = {
  /** The current database (`USE`, the request's `context.db`): where unqualified names live. */
  readonly db: string;
  /** The statement as sent (trimmed). */
  readonly sql: string;
  readonly params: Record<string, unknown>;
  readonly deadline: Deadline;
  /** `USE db`: the database later statements of this client run in. */
  readonly use: (database: string) => void;
};

type StatementAnswer = OkAnswer | TableAnswer;

export type StatementHandler<K extends StatementKindName> = (
  statement: StatementOf<K>,
  context: StatementContext,
) => Promise<StatementAnswer>;

export type StatementHandlers<K extends StatementKindName = StatementKindName> = {
  readonly [P in K]: StatementHandler<P>;
};

/**
 * The two writes a knowledge base takes in a project (src/knowledgeBases/sql.ts): INSERT (its rows
 * become documents) and DELETE (the documents whose chunks match the condition).
 */
export type KnowledgeBaseRows = {
  readonly insert: (statement: StatementOf<'Insert'>, context: StatementContext) => Promise<OkAnswer>;
  readonly delete: (statement: StatementOf<'Delete'>, context: StatementContext) => Promise<OkAnswer>;
};

/**
 * How a capability's projection tables show in SQL: its information_schema tables, the tables every
 * project has, and what a caller scoped to one project reads of its rows. `src/sql/catalog/catalog.ts`
 * builds the catalog from every slice's (listed once in `src/wiring/sqlSlices.ts`).
 */
export type SqlCatalog = {
  /** information_schema tables (MindsDB's upper-case columns): views over its `main.<table>`s. */
  readonly informationSchema: Readonly<Record<string, string>>;
  /** Tables every project has (`<project>.skills`), each the information_schema table it shows. */
  readonly projectTables?: Readonly<Record<string, string>>;
  /**
   * The rows of each of its `main.<table>`s a caller scoped to one project reads, as a condition,
   * given the one saying a row's PROJECT is the caller's (a table not listed: no rows at all).
   */
  readonly scopedRows?: Readonly<Record<string, (ofProject: string) => string>>;
  /**
   * The log streams of a project's resources this slice keeps (a job's runs, an agent's
   * evaluations…), as a condition on an event's `stream`, given the one saying a row's PROJECT is
   * the project: what a caller scoped to it reads of information_schema.EVENTS besides the
   * project's own stream. A resource deleted since is not listed.
   */
  readonly projectStreams?: (ofProject: string) => string;
};

/**
 * How a name in a query is told apart: each SQL-visible capability answers for its own objects
 * from its slice's `sql.ts` (listed once in `src/wiring/sqlSlices.ts`), and the SQL interface resolves a
 * table reference through them. Each answers the canonical name (or whether it exists).
 */
export type SqlLookups = {
  isProject(name: string): Promise<string | undefined>;
  /** The uploaded file's table name (its key) if there is one. */
  isFile(name: string): Promise<string | undefined>;
  isIntegration(name: string): Promise<string | undefined>;
  /** Whether `project` has a model called `name` (queried as a table it predicts). */
  isModel(project: string, name: string): Promise<boolean>;
  /** The agent's name when `project` has an agent called `name` (queried as a table it answers). */
  isAgent(project: string, name: string): Promise<string | undefined>;
  /** The knowledge base's name when `project` has one called `name` (queried as a table it searches). */
  isKnowledgeBase(project: string, name: string): Promise<string | undefined>;
  /** The query of `project.name` when it is a view. */
  viewQuery(project: string, name: string): Promise<string | undefined>;
};

/** A table whose rows name their project: a scoped caller reads its project's. */
export const ownProject = (ofProject: string) => ofProject;

export const ok: OkAnswer = { type: 'ok', affected_rows: null };

/** A qualified name's project: the one it names, or the current database. */
export const projectOf = (name: QualifiedName, context: StatementContext) => name.project ?? context.db;

/** A name a resource may take (the same rule as REST's), or a 400-class error naming the rule. */
export const validName = (what: string, name: string) => {
  const r = resourceName(what).safeParse(name);
  if (!r.success) throw invalid(r.error.issues.map((i) => i.message).join('; '));
  return name;
};

/** A `USING k = v` value that must be text (numbers and booleans as written). */
export const optionText = (key: string, v: UsingValue | undefined): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw invalid(`${key} must be a text value`);
};

/** A `USING k = {…}` value that must be a JSON object. */
export const optionObject = (key: string, v: UsingValue): Params => {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v;
  throw invalid(`${key} must be a JSON object`);
};

/** Whether a look-up finds its resource (its NotFound is an answer; any other error is thrown). */
export const exists = async (get: () => Promise<unknown>) => {
  try {
    await get();
    return true;
  } catch (error) {
    if (isNotFoundError(error)) return false;
    throw error;
  }
};

/** Runs a removal; with IF EXISTS, a resource that is not there is no error. */
export const unlessMissing = async (ifExists: boolean, remove: () => Promise<unknown>) => {
  try {
    await remove();
  } catch (error) {
    if (!(ifExists && isNotFoundError(error))) throw error;
  }
};

/**
 * DROP SKILL | AGENT | CHATBOT | JOB | TRIGGER | KNOWLEDGE_BASE | VIEW [IF EXISTS] … [FORGET]: the
 * resource's delete, through its service (`remove`, given its project, its name, whether to forget
 * its secrets, and IF EXISTS for a service whose command decides it). With IF EXISTS a missing one
 * is no error, nor is a missing project: as PostgreSQL's and MySQL's DROP … IF EXISTS of a table
 * in a schema that does not exist.
 */
export const dropByName =
  (remove: (project: string, ref: string, forget: boolean, ifExists: boolean) => Promise<unknown>) =>
  async (
    statement: { readonly name: QualifiedName; readonly ifExists: boolean; readonly forget?: boolean },
    context: StatementContext,
  ): Promise<OkAnswer> => {
    await unlessMissing(statement.ifExists, () =>
      remove(
        projectOf(statement.name, context),
        statement.name.name,
        statement.forget ?? false,
        statement.ifExists,
      ),
    );
    return ok;
  };
