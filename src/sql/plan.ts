import type { DuckDBConnection } from '@duckdb/node-api';
import type { Predictor } from '../engines/ml/predict';
import {
  nodeAt,
  parseSelect,
  printSelect,
  requiredNodeAt,
  requiredNodesAt,
  serializedConstantOf,
  type AstNode,
} from './ast';
import type { CatalogResolver } from './catalog';
import { catalogFaceOf, externalListings, type CatalogFace } from './catalogListing';
import { pause, type Deadline } from './deadline';
import { SqlError, SqlErrorCode } from './errors';
import type { SqlDialect } from '../integrations/dialects';
import { pushableFilters, stripQualifier, type ExternalFetch } from './federation';
import { resolveScopes } from './scope';
import { expandViews, MAX_VIEW_DEPTH } from './viewTables';
import { asOfMarkOf, asOfPlaceholders, markAsOf } from './asOf';
import { modelInputFetches } from './predictionFetches';
import { treeCallsLlm, planLlmFunction, type LlmFunctionPlan } from './llmFunction';
import {
  planKnowledgeBaseSearches,
  type KnowledgeBaseRef,
  type KnowledgeBaseSearch,
  type KnowledgeBaseSources,
} from './knowledgeBaseTables';

/**
 * MindsDB names an unaliased constant by its value (`select 'a'` → "a") where DuckDB quotes it:
 * the names to use instead, by position (undefined: keep DuckDB's).
 */
const constantColumnNames = (statement: AstNode): (string | undefined)[] | null => {
  const node = nodeAt(statement, 'node');
  const list = node?.type === 'SELECT_NODE' ? requiredNodesAt(node, 'select_list') : undefined;
  if (!list || list.some((item) => item.class === 'STAR')) return null;
  return list.map((item) => {
    if (item.alias || item.class !== 'CONSTANT') return undefined;
    const value = serializedConstantOf(item);
    return value.is_null ? 'NULL' : value.type.id === 'VARCHAR' ? String(value.value) : undefined;
  });
};

/**
 * A query after parsing and name resolution. `local`: everything lives in DuckDB. `pushdown`: every
 * table is in one external database, so the whole query goes there and only the answer comes back.
 * `federated`: external tables (filtered where possible) are copied into DuckDB, which runs the rest.
 */
export type Prepared =
  | {
      kind: 'local';
      sql: string;
      names: (string | undefined)[] | null;
      /** The answer depends only on the projections (no clock, randomness, sampling, searches). */
      deterministic: boolean;
      /** Knowledge bases searched: views the run makes before the query reads them. */
      searches: KnowledgeBaseSearch[];
      /** `LLM(…)` in its column list: the prompts asked before it reads (src/sql/llmFunction.ts). */
      llm?: LlmFunctionPlan;
    }
  | { kind: 'pushdown'; integration: string; sql: string }
  | {
      kind: 'federated';
      sql: string;
      names: (string | undefined)[] | null;
      fetches: ExternalFetch[];
      searches: KnowledgeBaseSearch[];
      /** Temporary tables made from the fetched ones before the query runs (external columns). */
      assemble?: { temp: string; sql: string }[];
      llm?: LlmFunctionPlan;
    }
  | {
      /**
       * A model or an agent queried as a table: predictions and answers are computed at run time,
       * never cached.
       */
      kind: 'model';
      statement: AstNode;
      refs: ComputedRef[];
      names: (string | undefined)[] | null;
      /** External tables the prediction reads, copied into DuckDB first. */
      fetches: ExternalFetch[];
    };

/** A table whose rows are computed: a model's predictions, or an agent's answers. */
export type ComputedRef = { node: AstNode; project: string; name: string; kind: 'model' | 'agent' };

/** What an agent queried as a table answers for one question. */
export type AgentAnswer = { answer: string; context: readonly unknown[]; traceId: string };

/** What the SQL endpoint needs from the models, agents and knowledge bases capabilities. */
export type Predictions = KnowledgeBaseSources & {
  predictor(project: string, name: string): Promise<Predictor>;
  ask(project: string, agent: string, question: string, signal: AbortSignal): Promise<AgentAnswer>;
  /** An LLM model's answers (undefined: `name` is a trained model), src/llmCalls. */
  llmModel?(project: string, name: string): Promise<LlmModelAnswers | undefined>;
  /** `LLM(prompt)`'s answers, on the default model (src/llmCalls). */
  llmFunction?(prompts: string[], project: string | null, signal: AbortSignal): Promise<(string | null)[]>;
};

/** What an LLM model computes: its columns (the target, then the inputs it echoes), and its rows. */
export type LlmModelAnswers = {
  readonly columns: readonly string[];
  rows(
    inputs: Record<string, unknown>[],
    overrides: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>[]>;
};

/**
 * Which tables a query may read (an agent's SQL tool: its skill's tables only). `database` and
 * `table` are MindsDB's names; a refusal is thrown as the policy words it.
 */
export type TablePolicy = {
  check(database: string, table: string): void;
  /**
   * A project-scoped caller's project: information_schema (and SHOW, DESCRIBE) answer that
   * project's rows only (catalog.ts, scopeConditions). Absent: every row.
   */
  readonly project?: string;
  /**
   * Set (to the role's name) for a caller who may not write: what is pushed down to an external
   * database is held to src/sql/pushdownAllowList.ts and runs in a read-only transaction.
   */
  readonly readOnlyRole?: string;
};

export type ExternalRef = {
  node: AstNode;
  integration: string;
  schema: string | null;
  table: string;
  native?: string;
};

/** DuckDB's own TRUE (as its parser writes it), for conditions cut out of a WHERE clause. */
let trueNode: AstNode | undefined;
const trueConstant = async (c: DuckDBConnection) => {
  trueNode ??= requiredNodeAt(
    requiredNodeAt(await parseSelect(c, 'SELECT 1 WHERE true'), 'node'),
    'where_clause',
  );
  const node = trueNode;
  return () => structuredClone(node);
};

/**
 * How one external table is copied into DuckDB: its reference becomes a temporary table (keeping
 * the name it is known by in the query), filled by a query in the database's own dialect with the
 * filters (and row limit) that may go along.
 */
const fetchOf = (
  e: ExternalRef,
  i: number,
  filters: ((dialect: SqlDialect) => string)[],
  limit: number | null = null,
): ExternalFetch => {
  const temp = `__mindledger_external_${i}`;
  const alias = String(e.node.alias || e.table);
  e.node.schema_name = '';
  e.node.catalog_name = '';
  e.node.table_name = temp;
  if (!e.node.alias) e.node.alias = alias;
  if (e.native) return { temp, integration: e.integration, sql: e.native };
  const { schema, table } = e;
  return {
    temp,
    integration: e.integration,
    // Qualified always: by the schema the query named, else by the registered database's.
    sql: ({ dialect, qualify }) =>
      `SELECT * FROM ${schema ? `${dialect.quote(schema)}.${dialect.quote(table)}` : qualify(table)}${
        filters.length ? ` WHERE ${filters.map((f) => f(dialect)).join(' AND ')}` : ''
      }${limit === null ? '' : ` LIMIT ${limit}`}`,
  };
};

/** Parses with DuckDB, resolves every table to where MindsDB's name lives, refuses what reaches outside. */
export const prepare = async (
  c: DuckDBConnection,
  catalog: CatalogResolver,
  text: string,
  db: string,
  natives: Map<string, { integration: string; sql: string }>,
  deadline?: Deadline,
  policy?: TablePolicy,
  /** How many times views were put in place of their names already. */
  viewDepth = 0,
): Promise<Prepared> => {
  const statement = await parseSelect(c, await markAsOf(c, text));
  const asOf = asOfPlaceholders();
  let localTables = 0;
  const externals: ExternalRef[] = [];
  const modelRefs: ComputedRef[] = [];
  const knowledgeBases: KnowledgeBaseRef[] = [];
  /** References to information_schema.TABLES and COLUMNS, which also list the external databases' relations. */
  const catalogListings: { node: AstNode; face: CatalogFace }[] = [];
  // CTEs are resolved by scope and renamed; what is left is every other table reference.
  const { tables, deterministic } = await resolveScopes(statement, {
    nodes: 20_000,
    pause: async () => {
      await pause();
      deadline?.check();
    },
  });
  // A view is read as its query: put in place, then the whole text is resolved again.
  if (await expandViews(c, catalog, tables, db, deadline, policy)) {
    if (viewDepth >= MAX_VIEW_DEPTH)
      throw new SqlError(
        SqlErrorCode.Invalid,
        `Views read views more than ${MAX_VIEW_DEPTH} deep: a view refers to itself, directly or through others`,
      );
    return prepare(c, catalog, await printSelect(c, statement), db, natives, deadline, policy, viewDepth + 1);
  }
  for (const n of tables) {
    deadline?.check();
    const catalogName = String(n.catalog_name ?? '');
    const schema = String(n.schema_name ?? '');
    const table = String(n.table_name);
    const native = !schema && !catalogName ? natives.get(table) : undefined;
    if (native) {
      policy?.check(native.integration, '(native query)');
      externals.push({ node: n, integration: native.integration, schema: null, table, native: native.sql });
      continue;
    }
    const mark = asOfMarkOf(table);
    if (mark) {
      // A resource table as of a log position: its rows then, read from the history tables.
      const database = schema || db;
      policy?.check(database, mark.table);
      const query = await catalog.asOf(database, mark.table, mark.position, policy?.project ?? null);
      n.alias = String(n.alias || mark.table);
      n.table_name = asOf.add(query);
      n.schema_name = '';
      n.catalog_name = '';
      localTables++;
      continue;
    }
    if (catalogName) {
      policy?.check(catalogName, `${schema}.${table}`);
      // `project.model.3`: a model version, which DuckDB reads as catalog.schema.table.
      if (/^\d+$/.test(table)) {
        const modelProject = await catalog.model(catalogName, schema);
        if (modelProject) {
          modelRefs.push({ node: n, project: modelProject, name: `${schema}.${table}`, kind: 'model' });
          continue;
        }
      }
      const integration = await catalog.integration(catalogName);
      if (!integration)
        throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${catalogName} does not exist`);
      externals.push({ node: n, integration, schema, table });
      continue;
    }
    const database = schema || db;
    policy?.check(database, table);
    // An agent's name wins over a model's, as in MindsDB.
    const agent = await catalog.agent(database, table);
    if (agent) {
      modelRefs.push({ node: n, project: agent.project, name: agent.agent, kind: 'agent' });
      continue;
    }
    const knowledgeBase = await catalog.knowledgeBase(database, table);
    if (knowledgeBase) {
      knowledgeBases.push({ node: n, project: knowledgeBase.project, name: knowledgeBase.name });
      localTables++;
      continue;
    }
    const modelProject = await catalog.model(database, table);
    if (modelProject) {
      modelRefs.push({ node: n, project: modelProject, name: table, kind: 'model' });
      continue;
    }
    const integration = await catalog.integration(database);
    if (integration) {
      externals.push({ node: n, integration, schema: null, table });
      continue;
    }
    const physical = await catalog.resolve(database, table, c, policy?.project ?? null);
    n.schema_name = physical.schema;
    n.table_name = physical.table;
    n.catalog_name = '';
    localTables++;
    // A project-scoped caller reaches no external database: their relations are not listed to it.
    const face = database.toLowerCase() === 'information_schema' ? catalogFaceOf(table) : undefined;
    if (face && policy?.project === undefined) catalogListings.push({ node: n, face });
  }
  const names = constantColumnNames(statement);
  if (modelRefs.length > 0 && knowledgeBases.length > 0)
    throw new SqlError(
      SqlErrorCode.Invalid,
      'A knowledge base and a model or agent in one query: search the knowledge base in a subquery of its own first',
    );
  const searches = knowledgeBases.length
    ? await planKnowledgeBaseSearches(statement, knowledgeBases, await trueConstant(c))
    : [];
  if (modelRefs.length > 0 && asOf.size > 0)
    throw new SqlError(
      SqlErrorCode.Invalid,
      'AS OF and a model or agent in one query: read the table AS OF in a view or a query of its own first',
    );
  if (modelRefs.length > 0 && treeCallsLlm(statement))
    throw new SqlError(
      SqlErrorCode.Invalid,
      'LLM() and a model or agent in one query: read the predictions in a subquery of their own first',
    );
  if (modelRefs.length > 0) {
    if (modelRefs.length > 1) throw new SqlError(SqlErrorCode.Invalid, 'One model or agent per query');
    const fetches = await modelInputFetches(c, statement, modelRefs[0]!.node, externals, fetchOf);
    return { kind: 'model', statement, refs: modelRefs, names, fetches };
  }
  const listings =
    catalogListings.length > 0 ? await externalListings(c, catalogListings, statement) : undefined;
  const llm = externals.length === 0 && !listings ? await planLlmFunction(c, statement) : null;
  if (externals.length === 0 && !listings)
    return {
      kind: 'local',
      sql: asOf.fill(await printSelect(c, statement)),
      names,
      deterministic: deterministic && searches.length === 0 && !llm,
      searches,
      ...(llm ? { llm } : {}),
    };

  const integrations = new Set(externals.map((e) => e.integration.toLowerCase()));
  if (
    !listings &&
    !treeCallsLlm(statement) &&
    localTables === 0 &&
    integrations.size === 1 &&
    externals.every((e) => !e.native)
  )
    return {
      kind: 'pushdown',
      integration: externals[0]!.integration,
      sql: stripQualifier(text, externals[0]!.integration),
    };

  const where = nodeAt(nodeAt(statement, 'node'), 'where_clause');
  const fetches = externals.map((e, i) =>
    fetchOf(
      e,
      i,
      pushableFilters(where, String(e.node.alias || e.table), externals.length + localTables === 1),
    ),
  );
  // Planned once external tables are named by their temporary tables (its first pass reads them).
  const federatedLlm = await planLlmFunction(c, statement);
  return {
    kind: 'federated',
    sql: asOf.fill(await printSelect(c, statement)),
    names,
    fetches: [...fetches, ...(listings?.fetches ?? [])],
    searches,
    ...(listings ? { assemble: listings.assemble } : {}),
    ...(federatedLlm ? { llm: federatedLlm } : {}),
  };
};
