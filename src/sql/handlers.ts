import { resourceName } from '../shared/names';
import type { ZodType } from 'zod';
import { DomainError, invalid, isDomainError, isNotFoundError } from '../shared/errors';
import type { Params } from '../shared/params';
import type { OkAnswer, TableAnswer } from './answers';
import type { Deadline } from './deadline';
import type { MindsStatement, Options, QualifiedName, UsingValue } from './parse';

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

type StatementHandler<K extends StatementKindName> = (
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

/** Runs a removal; with IF EXISTS, a resource that is not there is no error. */
export const unlessMissing = async (ifExists: boolean, remove: () => Promise<unknown>) => {
  try {
    await remove();
  } catch (error) {
    if (!(ifExists && isNotFoundError(error))) throw error;
  }
};

/**
 * A statement on one named resource, answered `ok`: `run` is given its project (the one it names, or
 * the current database), its name and the statement.
 */
export const byName =
  <S extends { readonly name: QualifiedName }>(
    run: (project: string, name: string, statement: S, context: StatementContext) => Promise<unknown>,
  ) =>
  async (statement: S, context: StatementContext): Promise<OkAnswer> => {
    await run(projectOf(statement.name, context), statement.name.name, statement, context);
    return ok;
  };

/** A look-up of a resource by its project and name (a missing one is its NotFound). */
type Get = (project: string, name: string) => Promise<unknown>;

/**
 * CREATE SKILL | AGENT | CHATBOT [IF NOT EXISTS] … USING …: `create` with its options, unless IF NOT
 * EXISTS finds one already through `get` (then nothing is done, and no option is read).
 */
export const createByName = (
  get: Get,
  create: (project: string, name: string, options: Options) => Promise<unknown>,
) =>
  byName<{ readonly name: QualifiedName; readonly ifNotExists: boolean; readonly options: Options }>(
    async (project, name, statement) => {
      if (statement.ifNotExists) {
        try {
          await get(project, name);
          return;
        } catch (error) {
          if (!isNotFoundError(error)) throw error;
        }
      }
      await create(project, name, statement.options);
    },
  );

/** UPDATE / ALTER SKILL | CHATBOT … SET …: `get` first (a missing one is its NotFound), then `update`. */
export const updateByName = (
  get: Get,
  update: (project: string, name: string, options: Options) => Promise<unknown>,
) =>
  byName<{ readonly name: QualifiedName; readonly options: Options }>(async (project, name, statement) => {
    await get(project, name);
    await update(project, name, statement.options);
  });

/**
 * DROP SKILL | AGENT | CHATBOT | JOB | TRIGGER | KNOWLEDGE_BASE | VIEW [IF EXISTS] … [FORGET]: the
 * resource's delete, through its service (`remove`, given its project, its name, IF EXISTS for a
 * service whose command decides it, and whether to forget its secrets). With IF EXISTS a missing one
 * is no error, nor is a missing project: as PostgreSQL's and MySQL's DROP … IF EXISTS of a table
 * in a schema that does not exist.
 */
export const dropByName = (
  remove: (
    project: string,
    name: string,
    ifExists: boolean,
    options: { forget: boolean },
  ) => Promise<unknown>,
) =>
  byName<{ readonly name: QualifiedName; readonly ifExists: boolean; readonly forget?: boolean }>(
    (project, name, statement) =>
      unlessMissing(statement.ifExists, () =>
        remove(project, name, statement.ifExists, { forget: statement.forget ?? false }),
      ),
  );

/**
 * EVALUATE AGENT | KNOWLEDGE_BASE p.x … USING …: `evaluate` with its project and the options `schema`
 * reads. A refusal names the statement (`EVALUATE AGENT p.x: …`, the SQL answer's error_message is
 * its detail), and the option it refuses (`scoring: …`).
 */
export const evaluateByName =
  <T, S extends { readonly name: QualifiedName; readonly options: Options }>(
    kind: string,
    schema: ZodType<T>,
    evaluate: (project: string, options: T, statement: S, context: StatementContext) => Promise<TableAnswer>,
  ) =>
  async (statement: S, context: StatementContext): Promise<TableAnswer> => {
    const project = projectOf(statement.name, context);
    try {
      const parsed = schema.safeParse(statement.options);
      if (!parsed.success)
        throw invalid(
          parsed.error.issues.map((i) => `${i.path.join('.') || 'USING'}: ${i.message}`).join('; '),
          'Invalid evaluation',
        );
      return await evaluate(project, parsed.data, statement, context);
    } catch (error) {
      if (!isDomainError(error)) throw error;
      const detail = `EVALUATE ${kind} ${project}.${statement.name.name}: ${error.detail}`;
      throw new DomainError(error.kind, error.title, detail, error.retryAfterSeconds);
    }
  };
