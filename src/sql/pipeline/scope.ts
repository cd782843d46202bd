import {
  isNode,
  MAX_QUERY_BLOCKS,
  nodeAt,
  nodesAt,
  requiredNodeAt,
  tooManySelects,
  type AstNode,
} from './ast';
import { SqlError, SqlErrorCode } from '../errors';
import { GUARDED_FUNCTIONS, oversizedFormat } from '../../duckdb/valueGuards';
import { currentRequest } from '../../shared/requestContext';

/**
 * Name resolution on DuckDB's syntax tree, by scope.
 *
 * A bare table name that DuckDB binds is either a CTE in scope or a table of the physical catalog
 * (main.events, the projection tables, duckdb_* views, files by replacement scan). Deciding "CTE"
 * from the set of every CTE name anywhere in the query let `(WITH events AS …) x, events` read
 * main.events. Here each CTE is visible only where DuckDB makes it visible: in the query node that
 * defines it and the nodes nested in it, to the CTEs defined after it in the same WITH, and, for
 * a recursive CTE, to the recursive side of its own union. Every CTE is renamed to a name that no
 * physical table has (`__mindledger_cte_<n>_<name>`) and only references in scope follow it, so
 * should this scoping ever be wider than DuckDB's, DuckDB fails on an unknown table instead of
 * reading a physical one. Every other table reference is handed back to be resolved as a MindsDB
 * name (schema-qualified, so DuckDB never looks a bare name up in its catalog).
 */

/** Table functions a query may use; everything else (read_csv, glob, query, duckdb_settings, …) is refused. */
const ALLOWED_TABLE_FUNCTIONS = new Set(['range', 'generate_series', 'unnest']);

/**
 * The auditor reads the log and nothing else (docs/security.md, src/sql/statements/roles.ts): its table
 * policy admits information_schema.EVENTS only, and what no table reference shows is refused
 * here, with or without a FROM clause: a table function, a row generator in its scalar form
 * (`range(10)` is a list, `unnest` makes rows of one), a recursive CTE (rows out of nothing), and
 * the LLM functions (`LLM()`, LLM_FILTER, LLM_REDUCE, LLM_RERANK), which spend the server's
 * provider key. A SELECT without FROM still computes values from constants (clients' pings:
 * `SELECT 1`, `SELECT version()`).
 */
const AUDITOR_REFUSED_FUNCTIONS = new Set([
  'range',
  'generate_series',
  'unnest',
  // The LLM functions (src/sql/faces/llm/face.ts).
  'llm',
  'llm_filter',
  'llm_reduce',
  'llm_rerank',
  // TO_MARKDOWN() reads files and fetches URLs (src/sql/faces/markdown/face.ts).
  'to_markdown',
]);
const refuseForAuditor = (what: string): never => {
  throw new SqlError(
    SqlErrorCode.Forbidden,
    `The auditor role reads information_schema.EVENTS only: ${what} is not allowed`,
  );
};

/** Scalar functions that would reveal files or the server's configuration. */
const forbiddenFunction = (name: string) =>
  /^(read_|pragma_|duckdb_|sniff_csv|glob|getenv|current_setting|which_secret|query$|query_table$)/i.test(
    name,
  ) || /_scan$/i.test(name);

const VOLATILE_FUNCTION =
  /random|uuid|now|current_|today|nextval|currval|setseed|get_current|transaction_timestamp/i;
/** A function whose answer may change from one call to the next (clock, randomness, sequences). */
export const isVolatileFunction = (name: string) => VOLATILE_FUNCTION.test(name);

/** Prefix of a renamed CTE; errors show the name the client wrote (see errors.ts). */
const CTE_PREFIX = '__mindledger_cte_';

const QUERY_NODES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE', 'RECURSIVE_CTE_NODE', 'CTE_NODE']);
/** Table references the tree may hold; anything else DuckDB can express is refused. */
const TABLE_REFS = new Set([
  'BASE_TABLE',
  'SUBQUERY',
  'JOIN',
  'TABLE_FUNCTION',
  'EXPRESSION_LIST',
  'EMPTY',
  'PIVOT',
]);
/** Fields that hold a table reference, by the node type holding them. */
const TABLE_REF_FIELDS: Record<string, string[]> = {
  SELECT_NODE: ['from_table'],
  JOIN: ['left', 'right'],
  PIVOT: ['source'],
};

/** CTE names visible at a point of the tree (lower-cased name → renamed), innermost first. */
type Scope = { names: Map<string, string>; parent: Scope | null };
const lookup = (scope: Scope | null, name: string): string | undefined => {
  for (let s = scope; s; s = s.parent) {
    const found = s.names.get(name);
    if (found !== undefined) return found;
  }
  return undefined;
};
const child = (parent: Scope | null, name: string, renamed: string): Scope => ({
  names: new Map([[name, renamed]]),
  parent,
});

type ScopeResult = {
  /** Bare or qualified table references that are not CTEs: to resolve as MindsDB names. */
  tables: AstNode[];
  /** No sampling, clock or randomness: the answer depends only on the projections. */
  deterministic: boolean;
  /**
   * Table functions read (`range`, `generate_series`, `unnest`): rows DuckDB makes, so a query
   * reading one is not a query of one external database alone, whatever else it reads.
   */
  tableFunctions: number;
};

const isTableRef = (n: AstNode) =>
  n.class === undefined && typeof n.type === 'string' && TABLE_REFS.has(n.type);

const refuseTableRef = (n: AstNode): never => {
  if (n.type === 'SHOW_REF')
    throw new SqlError(
      SqlErrorCode.Forbidden,
      "SHOW, DESCRIBE and SUMMARIZE are not allowed inside a query: use MindsDB's SHOW and DESCRIBE statements",
    );
  throw new SqlError(SqlErrorCode.Forbidden, `A table reference of kind ${String(n.type)} is not allowed`);
};

/**
 * Walks the statement (iteratively: a UNION of a thousand branches is a tree a thousand levels
 * deep), renames CTEs and their references in scope, checks table and scalar functions, and
 * returns the table references left to resolve. `yieldEvery` lets the caller give the event loop
 * a turn (and check its deadline) on large trees.
 */
export const resolveScopes = async (
  statement: AstNode,
  yieldEvery: { nodes: number; pause: () => Promise<void> },
): Promise<ScopeResult> => {
  const tables: AstNode[] = [];
  // The role of the request this statement is read for: the SQL service's policy comes from it too.
  const auditor = currentRequest()?.principal?.role === 'auditor';
  let deterministic = true;
  let tableFunctions = 0;
  let blocks = 0;
  let renamed = 0;
  let visited = 0;
  type Task = { value: unknown; scope: Scope | null; tableRef?: boolean };
  const stack: Task[] = [{ value: statement, scope: null }];
  const push = (value: unknown, scope: Scope | null, tableRef = false) => {
    if (value !== null && typeof value === 'object') stack.push({ value, scope, tableRef });
  };

  // Recursive CTE nodes, with the scope their recursive side sees (their own name included).
  const recursiveSide = new WeakMap<AstNode, Scope>();

  while (stack.length > 0) {
    if (++visited % yieldEvery.nodes === 0) await yieldEvery.pause();
    const { value, scope, tableRef } = stack.pop()!;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) push(value[i], scope, tableRef);
      continue;
    }
    if (!isNode(value)) continue;
    const n = value;
    if (tableRef && !isTableRef(n)) refuseTableRef(n);
    if (n.sample) deterministic = false;
    const keys = Object.keys(n);

    if (n.class === undefined && typeof n.type === 'string' && QUERY_NODES.has(n.type)) {
      // parseSelect counted them in the serialised tree already; this count keeps the walk
      // itself bounded whatever tree it is given.
      if (n.type === 'SELECT_NODE' && ++blocks > MAX_QUERY_BLOCKS) throw tooManySelects();
      if (auditor && n.type === 'RECURSIVE_CTE_NODE') refuseForAuditor('a recursive CTE');
      let inner = scope;
      const definitions: { query: AstNode; scope: Scope | null }[] = [];
      for (const entry of nodesAt(nodeAt(n, 'cte_map'), 'map')) {
        const cteName = String(entry.key);
        const query = requiredNodeAt(requiredNodeAt(entry, 'value'), 'query');
        const name = cteName.toLowerCase();
        const as = `${CTE_PREFIX}${renamed++}_${cteName}`;
        const node = nodeAt(query, 'node');
        // A recursive CTE sees itself on the recursive side of its union only: DuckDB binds the
        // other side, and every use earlier in the WITH, without it.
        if (node?.type === 'RECURSIVE_CTE_NODE' && String(node.cte_name).toLowerCase() === name) {
          node.cte_name = as;
          recursiveSide.set(node, child(inner, name, as));
        }
        definitions.push({ query, scope: inner });
        entry.key = as;
        inner = child(inner, name, as);
      }
      const own = recursiveSide.get(n);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        if (key === 'cte_map') continue;
        const fieldScope = own && key === 'right' ? own : inner;
        push(n[key], fieldScope, TABLE_REF_FIELDS[n.type]?.includes(key) ?? false);
      }
      for (let i = definitions.length - 1; i >= 0; i--) push(definitions[i]!.query, definitions[i]!.scope);
      continue;
    }

    if (n.class === undefined && n.type === 'BASE_TABLE') {
      const bare = !n.schema_name && !n.catalog_name;
      const cte = bare ? lookup(scope, String(n.table_name).toLowerCase()) : undefined;
      if (cte !== undefined) {
        // Column references qualified by the name the client wrote still find the table.
        if (!n.alias) n.alias = n.table_name;
        n.table_name = cte;
      } else tables.push(n);
      push(n.at_clause, scope);
      continue;
    }
    if (n.class === undefined && n.type === 'SHOW_REF') refuseTableRef(n);
    if (n.class === undefined && n.type === 'TABLE_FUNCTION') {
      const fn = String(nodeAt(n, 'function')?.function_name ?? '');
      if (auditor) refuseForAuditor(`table function ${fn}()`);
      if (!ALLOWED_TABLE_FUNCTIONS.has(fn.toLowerCase()))
        throw new SqlError(SqlErrorCode.Forbidden, `Table function ${fn}() is not allowed`);
      tableFunctions++;
    }
    if (n.class === 'FUNCTION') {
      const fn = String(n.function_name);
      if (auditor && AUDITOR_REFUSED_FUNCTIONS.has(fn.toLowerCase())) refuseForAuditor(`${fn}()`);
      if (forbiddenFunction(fn))
        throw new SqlError(SqlErrorCode.Forbidden, `Function ${fn}() is not allowed`);
      // The built-in under a size guard (src/duckdb/valueGuards.ts) is reached by a qualified name.
      if ((n.schema || n.catalog) && GUARDED_FUNCTIONS.has(fn.toLowerCase()))
        throw new SqlError(SqlErrorCode.Forbidden, `Function ${fn}() is called by its bare name only`);
      const format = nodeAt(nodesAt(n, 'children')[0], 'value');
      if (n.children && typeof format?.value === 'string' && oversizedFormat(fn, format.value))
        throw new SqlError(
          SqlErrorCode.TooLarge,
          `${fn}(): a width or precision of a million or more (or a * width) is not allowed`,
        );
      if (VOLATILE_FUNCTION.test(fn)) deterministic = false;
    }
    const fields = n.class === undefined ? (TABLE_REF_FIELDS[String(n.type)] ?? []) : [];
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      push(n[key], scope, fields.includes(key));
    }
  }
  return { tables, deterministic, tableFunctions };
};
