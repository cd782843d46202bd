import type { DuckDBConnection } from '@duckdb/node-api';
import type { Predictor } from '../../engines/ml/predict';
import {
  nodeAt,
  parseSelect,
  printSelect,
  printSelectRenaming,
  requiredNodeAt,
  requiredNodesAt,
  serializedConstantOf,
  type AstNode,
} from './ast';
import type { CatalogResolver } from '../catalog/catalog';
import { externalListings, type CatalogFace } from '../catalog/catalogListing';
import { pause, type Deadline } from '../deadline';
import { SqlError, SqlErrorCode } from '../errors';
import type { SqlDialect } from '../../integrations/dialects';
import { pushableFilters, stripQualifier, type ExternalFetch } from '../faces/integration/federation';
import { resolveScopes } from './scope';
import { expandViews, MAX_VIEW_DEPTH } from '../faces/view/viewTables';
import { asOfMarkOf, asOfPlaceholders, markAsOf } from './asOf';
import type { TokenRename } from './literalShape';
import { modelInputFetches } from '../faces/model/predictionFetches';
import type { AskLlm, LlmCallsPlan } from '../faces/llm/calls';
import { llmFunctionFace } from '../faces/llm/face';
import type { MarkdownFunctionPlan, MarkdownSources } from '../faces/markdown/toMarkdown';
import { markdownFunctionFace } from '../faces/markdown/face';
import { TABLE_FACES } from '../faces';
import type { ComputedRef, ExternalRef, FaceContext, Recognised, TableName } from '../faces/face';
import {
  planKnowledgeBaseSearches,
  type KnowledgeBaseRef,
  type KnowledgeBaseSearch,
  type KnowledgeBaseSources,
} from '../faces/knowledgeBase/knowledgeBaseTables';

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
      /**
       * The LLM functions it calls (LLM(), LLM_FILTER, LLM_REDUCE, LLM_RERANK), in the order their
       * inputs are asked before it reads (src/sql/faces/llm/face.ts).
       */
      llm?: readonly LlmCallsPlan[];
      /** `TO_MARKDOWN(…)`: the documents converted before it reads (src/sql/faces/markdown). */
      markdown?: MarkdownFunctionPlan;
      /**
       * Set when `sql` is the client's text with these tokens renamed and nothing else changed, and
       * the plan reads no literal (no AS OF, searches, LLM functions, TO_MARKDOWN): a text differing
       * only in whole numbers is planned alike (src/sql/pipeline/literalShape.ts).
       */
      renames?: readonly TokenRename[];
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
      llm?: readonly LlmCallsPlan[];
      markdown?: MarkdownFunctionPlan;
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

/** What an agent queried as a table answers for one question. */
export type AgentAnswer = { answer: string; context: readonly unknown[]; traceId: string };

/** What the SQL endpoint needs from the models, agents and knowledge bases capabilities. */
export type Predictions = KnowledgeBaseSources & {
  predictor(project: string, name: string): Promise<Predictor>;
  ask(project: string, agent: string, question: string, signal: AbortSignal): Promise<AgentAnswer>;
  /** An LLM model's answers (undefined: `name` is a trained model), src/llmCalls. */
  llmModel?(project: string, name: string): Promise<LlmModelAnswers | undefined>;
  /** The LLM functions' answers (LLM(), LLM_FILTER, …), on the default model (src/llmCalls). */
  llmFunction?(asked: Parameters<AskLlm>[0], project: string | null, signal: AbortSignal): ReturnType<AskLlm>;
  /** `TO_MARKDOWN()`'s documents: uploaded files, and URLs fetched and converted (src/files). */
  toMarkdown?: MarkdownSources;
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
   * database is held to src/sql/faces/integration/pushdownAllowList.ts and runs in a read-only transaction.
   */
  readonly readOnlyRole?: string;
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

/** The names a query reads, by the place of the plan their faces put them in (src/sql/faces). */
type Recognitions = {
  externals: ExternalRef[];
  computed: ComputedRef[];
  knowledgeBases: KnowledgeBaseRef[];
  /** References to information_schema.TABLES and COLUMNS, which also list the external databases' relations. */
  listings: { node: AstNode; face: CatalogFace }[];
  /** Tables read in DuckDB itself (knowledge bases' searches and table functions included). */
  localTables: number;
};

/** One table reference as a `TableName`, held to the caller's policy as its kind words it. */
const nameOf = (
  node: AstNode,
  db: string,
  natives: Map<string, { integration: string; sql: string }>,
  policy: TablePolicy | undefined,
): TableName => {
  const catalog = String(node.catalog_name ?? '');
  const schema = String(node.schema_name ?? '');
  const table = String(node.table_name);
  const database = schema || db;
  const native = !schema && !catalog ? natives.get(table) : undefined;
  const mark = native ? undefined : asOfMarkOf(table);
  if (native) policy?.check(native.integration, '(native query)');
  else if (mark) policy?.check(database, mark.table);
  else if (catalog) policy?.check(catalog, `${schema}.${table}`);
  else policy?.check(database, table);
  const asOf = mark ? { table: mark.table, position: mark.position } : undefined;
  return { node, catalog, schema, table, database, ...(native ? { native } : {}), ...(asOf ? { asOf } : {}) };
};

/** The first face to recognise `name` has it; the system face, last, answers or refuses every name. */
const recognise = async (name: TableName, context: FaceContext): Promise<Recognised> => {
  for (const face of TABLE_FACES) {
    const recognised = await face.recognise(name, context);
    if (recognised) return recognised;
  }
  throw new SqlError(SqlErrorCode.UnknownTable, `Table ${name.database}.${name.table} does not exist`);
};

const recogniseAll = async (
  tables: AstNode[],
  context: FaceContext,
  nameIn: (node: AstNode) => TableName,
  deadline?: Deadline,
): Promise<Recognitions> => {
  const found: Recognitions = {
    externals: [],
    computed: [],
    knowledgeBases: [],
    listings: [],
    localTables: 0,
  };
  for (const node of tables) {
    deadline?.check();
    const recognised = await recognise(nameIn(node), context);
    switch (recognised.place) {
      case 'external':
        found.externals.push(recognised.ref);
        break;
      case 'computed':
        found.computed.push(recognised.ref);
        break;
      case 'search':
        found.knowledgeBases.push(recognised.ref);
        found.localTables++;
        break;
      case 'local':
        found.localTables++;
        if (recognised.listing) found.listings.push({ node, face: recognised.listing });
        break;
      default: {
        const _exhaustive: never = recognised;
        return _exhaustive;
      }
    }
  }
  return found;
};

/** What one query may not mix with a model or an agent, refused in MindsDB's words. */
const refuseMixedComputed = (found: Recognitions, statement: AstNode, asOfTables: number) => {
  if (found.computed.length === 0) return;
  if (found.knowledgeBases.length > 0)
    throw new SqlError(
      SqlErrorCode.Invalid,
      'A knowledge base and a model or agent in one query: search the knowledge base in a subquery of its own first',
    );
  if (asOfTables > 0)
    throw new SqlError(
      SqlErrorCode.Invalid,
      'AS OF and a model or agent in one query: read the table AS OF in a view or a query of its own first',
    );
  if (llmFunctionFace.calledIn(statement))
    throw new SqlError(
      SqlErrorCode.Invalid,
      'LLM functions (LLM(), LLM_FILTER, LLM_REDUCE, LLM_RERANK) and a model or agent in one query: read the predictions in a subquery of their own first',
    );
  if (found.computed.length > 1) throw new SqlError(SqlErrorCode.Invalid, 'One model or agent per query');
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
  const marked = await markAsOf(c, text);
  const statement = await parseSelect(c, marked);
  const asOf = asOfPlaceholders();
  // CTEs are resolved by scope and renamed; what is left is every other table reference.
  const { tables, deterministic, tableFunctions } = await resolveScopes(statement, {
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
  const context: FaceContext = { c, catalog, project: policy?.project, addAsOf: (query) => asOf.add(query) };
  const found = await recogniseAll(tables, context, (n) => nameOf(n, db, natives, policy), deadline);
  // `range(3)` beside an external table is DuckDB's: the query is federated, not pushed down whole
  // to a database that has no such function (or one of the same name that means something else).
  found.localTables += tableFunctions;
  const names = constantColumnNames(statement);
  refuseMixedComputed(found, statement, asOf.size);
  const searches = found.knowledgeBases.length
    ? await planKnowledgeBaseSearches(statement, found.knowledgeBases, await trueConstant(c))
    : [];
  if (found.computed.length > 0) {
    const fetches = await modelInputFetches(c, statement, found.computed[0]!.node, found.externals, fetchOf);
    return { kind: 'model', statement, refs: found.computed, names, fetches };
  }
  // Renames are of the text parsed: the client's own only without AS OF, and before any view.
  const ownText = viewDepth === 0 && marked === text;
  return planReads(c, { text, statement, found, names, searches, deterministic, asOf, ownText });
};

/** A query of no model or agent: read in DuckDB, pushed down whole, or federated. */
const planReads = async (
  c: DuckDBConnection,
  p: {
    text: string;
    statement: AstNode;
    found: Recognitions;
    names: (string | undefined)[] | null;
    searches: KnowledgeBaseSearch[];
    deterministic: boolean;
    asOf: ReturnType<typeof asOfPlaceholders>;
    /** Whether `statement` was parsed from the client's own text (see `Prepared`'s `renames`). */
    ownText: boolean;
  },
): Promise<Prepared> => {
  const { text, statement, names, searches, asOf } = p;
  const { externals, localTables } = p.found;
  // Its calls become reads of variables before the statement is printed (or pushed down).
  const markdown = markdownFunctionFace.plan(statement);
  const listings =
    p.found.listings.length > 0 ? await externalListings(c, p.found.listings, statement) : undefined;
  if (externals.length === 0 && !listings) {
    const llm = await llmFunctionFace.plan(c, statement);
    const printed = await printSelectRenaming(c, statement);
    const readsNoLiteral = asOf.size === 0 && searches.length === 0 && llm.length === 0 && !markdown;
    return {
      kind: 'local',
      sql: asOf.fill(printed.text),
      names,
      deterministic: p.deterministic && searches.length === 0 && llm.length === 0 && !markdown,
      searches,
      ...(llm.length ? { llm } : {}),
      ...(markdown ? { markdown } : {}),
      ...(p.ownText && readsNoLiteral && printed.renames ? { renames: printed.renames } : {}),
    };
  }
  const integrations = new Set(externals.map((e) => e.integration.toLowerCase()));
  if (
    !listings &&
    !markdown &&
    !llmFunctionFace.calledIn(statement) &&
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
  const llm = await llmFunctionFace.plan(c, statement);
  return {
    kind: 'federated',
    sql: asOf.fill(await printSelect(c, statement)),
    names,
    fetches: [...fetches, ...(listings?.fetches ?? [])],
    searches,
    ...(listings ? { assemble: listings.assemble } : {}),
    ...(llm.length ? { llm } : {}),
    ...(markdown ? { markdown } : {}),
  };
};
