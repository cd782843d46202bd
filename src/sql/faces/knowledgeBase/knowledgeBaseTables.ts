import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { questionTables } from '../../../engines/search/question';
import {
  emptySql,
  listSql,
  searchSql,
  topSearchSql,
  type MetadataColumn,
} from '../../../engines/search/search';
import { kbTables, KB_SCHEMA, type FieldType } from '../../../engines/search/layout';
import { quoteIdent, quoteString } from '../../../shared/quoting';
import {
  replaceableConjuncts,
  type Conjunct,
  conjunctsOf,
  constantValue,
  eachNode,
  isNode,
  nodeAt,
  nodesAt,
  requiredNodeAt,
  stringsAt,
  walk,
  type AstNode,
} from '../../pipeline/ast';
import { SqlError, SqlErrorCode, UNBOUND_DOLLAR } from '../../errors';

/** A knowledge base named in a query, before its search is cut out of the WHERE clause. */
export type KnowledgeBaseRef = { node: AstNode; project: string; name: string };

/**
 * A search condition's value: a constant written in the text, or a parameter (`content = :q`),
 * whose value is bound at each run (a plan is kept for the text with its placeholders): the two
 * search alike.
 */
export type SearchTerm = { readonly constant: unknown } | { readonly parameter: string };

/**
 * A knowledge base queried as a table, after planning: the query reads the temporary view `view`,
 * made afresh for each run from the question the WHERE clause asked (`content = '…'`), if any.
 */
export type KnowledgeBaseSearch = {
  readonly view: string;
  readonly project: string;
  readonly name: string;
  /** Null: no question; every chunk, in insertion order, distance and relevance null. */
  readonly question: SearchTerm | null;
  /** `hybrid_search_alpha = x`; null: the KB's setting. */
  readonly alpha: SearchTerm | null;
  /** `hybrid_search = false`: vector only (whatever the alpha). */
  readonly hybrid: SearchTerm | null;
  /** `relevance_threshold = x`: only chunks at least this relevant. */
  readonly threshold: SearchTerm | null;
  /**
   * The query's LIMIT when its answer is the search's first rows whatever the rest (`topN`): the
   * view then holds only those, ranked without their text (`topSearchSql`). Null: every chunk.
   */
  readonly top: number | null;
};

/** What running a search needs from the knowledge bases capability (the question's embedding). */
export type KnowledgeBaseSource = {
  readonly kbId: bigint;
  /** Null until the first insert fixes the vectors' size. */
  readonly dimensions: number | null;
  /** The question's embedding; null when there is no question or nothing to search. */
  readonly vector: Float32Array | null;
  readonly alpha: number;
  /** Metadata fields offered as columns; null: every field the documents have. */
  readonly metadataColumns: readonly string[] | null;
};

export type KnowledgeBaseSources = {
  knowledgeBase(
    project: string,
    name: string,
    question: string | null,
    signal: AbortSignal,
  ): Promise<KnowledgeBaseSource>;
};

/** Columns a knowledge base answers with whatever its metadata: metadata fields never shadow them. */
const FIXED_COLUMNS = new Set(['id', 'chunk_id', 'chunk_content', 'metadata', 'distance', 'relevance']);
/** Question columns: MindsDB's SDKs and docs write `content`, its agents' tools `chunk_content`. */
const QUESTION_COLUMNS = new Set(['content', 'chunk_content']);

const contains = (tree: unknown, target: AstNode): boolean => {
  if (tree === target) return true;
  if (Array.isArray(tree)) return tree.some((t) => contains(t, target));
  if (!isNode(tree)) return false;
  return Object.values(tree).some((v) => contains(v, target));
};

/** The value a constant or a named parameter stands for. */
const termOf = (value: AstNode): SearchTerm | undefined => {
  if (value.class === 'CONSTANT') return { constant: constantValue(value) };
  if (value.class === 'PARAMETER' && typeof value.identifier === 'string')
    return { parameter: value.identifier };
  return undefined;
};

/**
 * `col = constant` or `col = :parameter` (either way round), the column named by its last part and
 * its qualifier.
 */
const equality = (n: AstNode) => {
  if (n.class !== 'COMPARISON' || n.type !== 'COMPARE_EQUAL') return undefined;
  let [col, value] = [requiredNodeAt(n, 'left'), requiredNodeAt(n, 'right')];
  if (col.class !== 'COLUMN_REF') [col, value] = [value, col];
  if (col.class !== 'COLUMN_REF') return undefined;
  const term = termOf(value);
  if (!term) return undefined;
  const names = stringsAt(col, 'column_names').map((x) => x.toLowerCase());
  return {
    column: names[names.length - 1]!,
    qualifier: names.length > 1 ? names[names.length - 2]! : null,
    term,
  };
};

/** A term's value at this run: the constant, or what its parameter is bound to. */
const valueOf = (term: SearchTerm, bindings: Readonly<Record<string, DuckDBValue>>) => {
  if ('constant' in term) return term.constant;
  const value = bindings[term.parameter];
  // Every :name and @name was bound (or refused) before the run: an unbound one was written $name.
  if (value === undefined)
    throw new SqlError(SqlErrorCode.MissingParameter, `$${term.parameter} has no value. ${UNBOUND_DOLLAR}`);
  return typeof value === 'bigint' ? Number(value) : value;
};

/** The search's question, weight and threshold at this run, checked. */
const resolveSearch = (s: KnowledgeBaseSearch, bindings: Readonly<Record<string, DuckDBValue>>) => {
  let question: string | null = null;
  if (s.question) {
    const value = valueOf(s.question, bindings);
    if (value === null || String(value).trim() === '')
      throw new SqlError(SqlErrorCode.Invalid, `The question to knowledge base ${s.name} is empty`);
    question = String(value);
  }
  let alpha = s.alpha ? numberOf(valueOf(s.alpha, bindings), 'hybrid_search_alpha') : null;
  if (s.hybrid) {
    const hybrid = valueOf(s.hybrid, bindings);
    if (hybrid === false || String(hybrid).toLowerCase() === 'false') alpha = 1;
  }
  const threshold = s.threshold ? numberOf(valueOf(s.threshold, bindings), 'relevance_threshold') : null;
  return { question, alpha, threshold };
};

const numberOf = (value: unknown, what: string) => {
  const n = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : NaN;
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new SqlError(
      SqlErrorCode.Invalid,
      `${what} must be a number between 0 and 1, got ${String(value)}`,
    );
  return n;
};

/** Expressions whose value may depend on other rows than their own (aggregates, windows, subqueries). */
const SET_WIDE = new Set(['FUNCTION', 'WINDOW', 'SUBQUERY', 'AGGREGATE']);

const lastName = (e: AstNode | undefined) => {
  const names = e?.class === 'COLUMN_REF' ? stringsAt(e, 'column_names') : [];
  return names[names.length - 1]?.toLowerCase();
};

/**
 * Whether `n` is `relevance DESC`, the search's own order (ties ordered by the search too), in
 * `select`: a select-list expression named `relevance` that is not that column is what DuckDB
 * would order by.
 */
const isSearchOrder = (n: AstNode, select: AstNode) =>
  n.type === 'DESCENDING' &&
  lastName(nodeAt(n, 'expression')) === 'relevance' &&
  nodesAt(select, 'select_list').every(
    (e) => String(e.alias).toLowerCase() !== 'relevance' || lastName(e) === 'relevance',
  );

/**
 * Whether a query's answer is its LIMIT's first rows of the search, whatever the rows after them:
 * one object, so that a spec can switch it off, or break one of its rules (a kill check).
 */
export const topN = {
  /**
   * The LIMIT of `select` (a whole statement's SELECT, reading the knowledge base alone) when
   * taking that many of the search's rows first cannot change its answer: its WHERE holds only the
   * search's conditions (`searchOnly`: every other is read over the view, after any top N), its
   * rows are the view's one for one (no GROUP BY, HAVING, aggregate, window, DISTINCT, QUALIFY,
   * sample, OFFSET), and its order is none (the view's) or the search's (`relevance DESC`). A
   * threshold needs no rule: the rows it keeps start the search's order. Null otherwise.
   */
  limitOf: (select: AstNode, searchOnly: boolean): number | null => {
    if (!searchOnly || nodesAt(select, 'group_expressions').length > 0) return null;
    if (select.aggregate_handling !== 'STANDARD_HANDLING') return null;
    if (select.having || select.qualify || select.sample || nodeAt(select, 'from_table')?.sample) return null;
    let setWide = false;
    eachNode(select.select_list, (n) => void (setWide ||= SET_WIDE.has(String(n.class))));
    if (setWide) return null;
    let limit: number | null = null;
    for (const m of nodesAt(select, 'modifiers')) {
      if (m.type === 'ORDER_MODIFIER') {
        const orders = nodesAt(m, 'orders');
        if (orders.length !== 1 || !isSearchOrder(orders[0]!, select)) return null;
      } else if (m.type === 'LIMIT_MODIFIER') {
        const count = nodeAt(m, 'limit');
        if (nodeAt(m, 'offset') || count?.class !== 'CONSTANT') return null;
        const n = constantValue(count);
        if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return null;
        limit = n;
      } else return null;
    }
    return limit;
  },
};

/**
 * Cuts each knowledge base's search out of the query: in the SELECT whose FROM names it, the
 * conditions `content = '…'`, `hybrid_search_alpha = x`, `hybrid_search = true|false` and
 * `relevance_threshold = x` (ANDed at the top of WHERE) become TRUE and are kept for the run; the
 * table itself becomes a temporary view the run makes. Every other condition (metadata fields,
 * `relevance >= x`, joins) is plain SQL over that view.
 */
export const planKnowledgeBaseSearches = async (
  statement: AstNode,
  refs: readonly KnowledgeBaseRef[],
  trueConstant: () => AstNode,
): Promise<KnowledgeBaseSearch[]> => {
  const searches: KnowledgeBaseSearch[] = [];
  for (const [i, ref] of refs.entries()) {
    const alias = String(ref.node.alias || ref.name).toLowerCase();
    let question: SearchTerm | null = null;
    let alpha: SearchTerm | null = null;
    let hybrid: SearchTerm | null = null;
    let threshold: SearchTerm | null = null;
    /** The TRUEs put in place of the search's conditions: a WHERE of these only filters nothing. */
    const trues = new Set<AstNode>();
    const cut = ({ condition, replace }: Conjunct) => {
      const eq = equality(condition);
      if (!eq || (eq.qualifier !== null && eq.qualifier !== alias)) return;
      if (QUESTION_COLUMNS.has(eq.column)) {
        if (question !== null)
          throw new SqlError(
            SqlErrorCode.Invalid,
            `Knowledge base ${ref.name} is asked two questions; ask one`,
          );
        question = eq.term;
      } else if (eq.column === 'hybrid_search_alpha') alpha = eq.term;
      else if (eq.column === 'hybrid_search') hybrid = eq.term;
      else if (eq.column === 'relevance_threshold') threshold = eq.term;
      else return;
      const made = trueConstant();
      trues.add(made);
      replace(made);
    };
    await walk(statement, (n) => {
      if (n.type === 'SELECT_NODE' && contains(n.from_table, ref.node))
        for (const conjunct of replaceableConjuncts(nodeAt(n, 'where_clause'), (x) => (n.where_clause = x)))
          cut(conjunct);
    });
    // Only a statement's own SELECT of the knowledge base alone: its LIMIT is the answer's.
    const root = nodeAt(statement, 'node');
    const searchOnly = conjunctsOf(nodeAt(root, 'where_clause')).every((w) => trues.has(w));
    const top = root && root.from_table === ref.node ? topN.limitOf(root, searchOnly) : null;
    const view = `__mindledger_kb_${i}`;
    Object.assign(ref.node, {
      alias: ref.node.alias || ref.name,
      schema_name: '',
      catalog_name: '',
      table_name: view,
    });
    const search = { view, project: ref.project, name: ref.name, question, alpha, hybrid, threshold, top };
    // Constants are checked now, so a bad one is named before anything runs.
    if (![question, alpha, hybrid, threshold].some((t) => t && 'parameter' in t)) resolveSearch(search, {});
    searches.push(search);
  }
  return searches;
};

/** Every metadata field the documents of a knowledge base have had, with its SQL type. */
const metadataFieldsOf = async (c: DuckDBConnection, kbId: bigint) => {
  const reader = await c.runAndReadAll(`SELECT FIELD, TYPE FROM ${kbTables(kbId).fields} ORDER BY FIELD`);
  return new Map(
    reader.getRows().map((r) => [String(r[0]), (r[1] === null ? 'VARCHAR' : String(r[1])) as FieldType]),
  );
};

const tableExists = async (c: DuckDBConnection, kbId: bigint) =>
  (
    await c.runAndReadAll(
      `SELECT 1 FROM duckdb_tables() WHERE schema_name = ${quoteString(KB_SCHEMA)} AND table_name = ${quoteString(`kb_${kbId}`)}`,
    )
  ).getRows().length > 0;

/**
 * Makes each search's view on connection `c` (the one the query runs on): the question's vector
 * and terms as temporary tables, the view over them. Returns the objects to drop afterwards.
 */
export const materializeSearches = async (
  c: DuckDBConnection,
  searches: readonly KnowledgeBaseSearch[],
  sources: KnowledgeBaseSources,
  signal: AbortSignal,
  /** The values bound to the statement's parameters, by name. */
  bindings: Readonly<Record<string, DuckDBValue>> = {},
) => {
  const views: string[] = [];
  const tables: string[] = [];
  for (const [i, planned] of searches.entries()) {
    const s = { ...planned, ...resolveSearch(planned, bindings) };
    const source = await sources.knowledgeBase(s.project, s.name, s.question, signal);
    const stored = source.dimensions !== null && (await tableExists(c, source.kbId));
    const fields = stored ? await metadataFieldsOf(c, source.kbId) : new Map<string, FieldType>();
    const metadata: MetadataColumn[] = (source.metadataColumns ?? [...fields.keys()])
      .filter((m) => !FIXED_COLUMNS.has(m.toLowerCase()))
      .map((name) => ({ name, type: fields.get(name) ?? 'VARCHAR' }));
    let body: string;
    if (!stored) body = emptySql(metadata);
    else if (s.question === null || source.vector === null) body = listSql(source.kbId, metadata);
    else {
      const question = await questionTables(
        c,
        { dimensions: source.dimensions!, vector: source.vector, query: s.question },
        String(i),
      );
      tables.push(...question.names);
      const search = {
        kbId: source.kbId,
        dimensions: source.dimensions!,
        vectorTable: question.vectorTable,
        termsTable: question.termsTable,
        alpha: s.alpha ?? source.alpha,
        metadataColumns: metadata,
      };
      body = s.top === null ? searchSql(search) : topSearchSql(search, s.top);
    }
    if (s.threshold !== null) body = `SELECT * FROM (${body}) AS hits WHERE relevance >= ${s.threshold}`;
    views.push(quoteIdent(s.view));
    await c.run(`CREATE OR REPLACE TEMP VIEW ${quoteIdent(s.view)} AS ${body}`);
  }
  return { views, tables };
};
