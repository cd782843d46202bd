import type { DuckDBConnection } from '@duckdb/node-api';
import type { Predictor } from '../ml/predict';
import { parseSelect, printSelect, type AstNode } from './ast';
import type { CatalogResolver } from './catalog';
import { pause, type Deadline } from './deadline';
import { SqlError, SqlErrorCode } from './errors';
import { pushableFilters, stripQualifier, type ExternalFetch } from './federation';
import { resolveScopes } from './scope';
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
  const node = statement.node as AstNode | undefined;
  const list = node?.type === 'SELECT_NODE' ? (node.select_list as AstNode[]) : undefined;
  if (!list || list.some((item) => item.class === 'STAR')) return null;
  return list.map((item) => {
    if (item.alias || item.class !== 'CONSTANT') return undefined;
    const value = item.value as { is_null: boolean; value: unknown; type: { id: string } };
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
    }
  | { kind: 'pushdown'; integration: string; sql: string }
  | {
      kind: 'federated';
      sql: string;
      names: (string | undefined)[] | null;
      fetches: ExternalFetch[];
      searches: KnowledgeBaseSearch[];
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
    };

/** A table whose rows are computed: a model's predictions, or an agent's answers. */
export type ComputedRef = { node: AstNode; project: string; name: string; kind: 'model' | 'agent' };

/** What an agent queried as a table answers for one question. */
export type AgentAnswer = { answer: string; context: readonly unknown[]; traceId: string };

/** What the SQL endpoint needs from the models, agents and knowledge bases capabilities. */
export type Predictions = KnowledgeBaseSources & {
  predictor(project: string, name: string): Promise<Predictor>;
  ask(project: string, agent: string, question: string, signal: AbortSignal): Promise<AgentAnswer>;
};

/**
 * Which tables a query may read (an agent's SQL tool: its skill's tables only). `database` and
 * `table` are MindsDB's names; a refusal is thrown as the policy words it.
 */
export type TablePolicy = { check(database: string, table: string): void };

type ExternalRef = {
  node: AstNode;
  integration: string;
  schema: string | null;
  table: string;
  native?: string;
};

/** DuckDB's own TRUE (as its parser writes it), for conditions cut out of a WHERE clause. */
let trueNode: AstNode | undefined;
const trueConstant = async (c: DuckDBConnection) => {
  trueNode ??= ((await parseSelect(c, 'SELECT 1 WHERE true')).node as AstNode).where_clause as AstNode;
  const node = trueNode;
  return () => structuredClone(node);
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
): Promise<Prepared> => {
  const statement = await parseSelect(c, text);
  let localTables = 0;
  const externals: ExternalRef[] = [];
  const modelRefs: ComputedRef[] = [];
  const knowledgeBases: KnowledgeBaseRef[] = [];
  // CTEs are resolved by scope and renamed; what is left is every other table reference.
  const { tables, deterministic } = await resolveScopes(statement, {
    nodes: 20_000,
    pause: async () => {
      await pause();
      deadline?.check();
    },
  });
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
    const physical = await catalog.resolve(database, table, c);
    n.schema_name = physical.schema;
    n.table_name = physical.table;
    n.catalog_name = '';
    localTables++;
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
  if (modelRefs.length > 0) {
    if (externals.length > 0)
      throw new SqlError(
        SqlErrorCode.Invalid,
        'Predictions over external databases: upload the rows as a file, or use a native query',
      );
    if (modelRefs.length > 1) throw new SqlError(SqlErrorCode.Invalid, 'One model or agent per query');
    return { kind: 'model', statement, refs: modelRefs, names };
  }
  if (externals.length === 0)
    return {
      kind: 'local',
      sql: await printSelect(c, statement),
      names,
      deterministic: deterministic && searches.length === 0,
      searches,
    };

  const integrations = new Set(externals.map((e) => e.integration.toLowerCase()));
  if (localTables === 0 && integrations.size === 1 && externals.every((e) => !e.native))
    return {
      kind: 'pushdown',
      integration: externals[0]!.integration,
      sql: stripQualifier(text, externals[0]!.integration),
    };

  const where = (statement.node as AstNode | undefined)?.where_clause as AstNode | undefined;
  const fetches = externals.map((e, i): ExternalFetch => {
    const temp = `__mindledger_external_${i}`;
    const alias = String(e.node.alias || e.table);
    e.node.schema_name = '';
    e.node.catalog_name = '';
    e.node.table_name = temp;
    if (!e.node.alias) e.node.alias = alias;
    if (e.native) return { temp, integration: e.integration, sql: e.native };
    const filters = pushableFilters(where, alias, externals.length + localTables === 1);
    const { schema, table } = e;
    return {
      temp,
      integration: e.integration,
      sql: (quote) =>
        `SELECT * FROM ${schema ? `${quote(schema)}.` : ''}${quote(table)}${
          filters.length ? ` WHERE ${filters.map((f) => f(quote)).join(' AND ')}` : ''
        }`,
    };
  });
  return { kind: 'federated', sql: await printSelect(c, statement), names, fetches, searches };
};
