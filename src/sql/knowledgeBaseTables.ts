import type { DuckDBConnection } from '@duckdb/node-api';
import { questionTables } from '../kb/question';
import { emptySql, listSql, searchSql, type MetadataColumn } from '../kb/search';
import { kbTables, KB_SCHEMA, type FieldType } from '../kb/layout';
import { quoteIdent, quoteString } from '../shared/quoting';
import { constantValue, walk, type AstNode } from './ast';
import { SqlError, SqlErrorCode } from './errors';

/** A knowledge base named in a query, before its search is cut out of the WHERE clause. */
export type KnowledgeBaseRef = { node: AstNode; project: string; name: string };

/**
 * A knowledge base queried as a table, after planning: the query reads the temporary view `view`,
 * made afresh for each run from the question the WHERE clause asked (`content = '…'`), if any.
 */
export type KnowledgeBaseSearch = {
  readonly view: string;
  readonly project: string;
  readonly name: string;
  /** Null: no question; every chunk, in insertion order, distance and relevance null. */
  readonly question: string | null;
  /** `hybrid_search_alpha = x` (or `hybrid_search = false`: vector only); null: the KB's setting. */
  readonly alpha: number | null;
  /** `relevance_threshold = x`: only chunks at least this relevant. */
  readonly threshold: number | null;
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
  if (tree === null || typeof tree !== 'object') return false;
  return Object.values(tree as AstNode).some((v) => contains(v, target));
};

/** `col = constant` (either way round), the column named by its last part and its qualifier. */
const equality = (n: AstNode) => {
  if (n.class !== 'COMPARISON' || n.type !== 'COMPARE_EQUAL') return undefined;
  let [col, value] = [n.left as AstNode, n.right as AstNode];
  if (col.class !== 'COLUMN_REF') [col, value] = [value, col];
  if (col.class !== 'COLUMN_REF' || value.class !== 'CONSTANT') return undefined;
  const names = (col.column_names as string[]).map((x) => x.toLowerCase());
  return {
    column: names[names.length - 1]!,
    qualifier: names.length > 1 ? names[names.length - 2]! : null,
    value: constantValue(value),
  };
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
    let question: string | null = null;
    let alpha: number | null = null;
    let threshold: number | null = null;
    const cut = (where: AstNode | null | undefined, replace: (n: AstNode) => void) => {
      if (!where) return;
      if (where.class === 'CONJUNCTION' && where.type === 'CONJUNCTION_AND') {
        const children = where.children as AstNode[];
        children.forEach((child, k) =>
          cut(child, (n) => {
            children[k] = n;
          }),
        );
        return;
      }
      const eq = equality(where);
      if (!eq || (eq.qualifier !== null && eq.qualifier !== alias)) return;
      if (QUESTION_COLUMNS.has(eq.column)) {
        if (eq.value === null || String(eq.value).trim() === '')
          throw new SqlError(SqlErrorCode.Invalid, `The question to knowledge base ${ref.name} is empty`);
        if (question !== null)
          throw new SqlError(
            SqlErrorCode.Invalid,
            `Knowledge base ${ref.name} is asked two questions; ask one`,
          );
        question = String(eq.value);
      } else if (eq.column === 'hybrid_search_alpha') alpha = numberOf(eq.value, 'hybrid_search_alpha');
      else if (eq.column === 'hybrid_search')
        alpha = eq.value === false || String(eq.value).toLowerCase() === 'false' ? 1 : alpha;
      else if (eq.column === 'relevance_threshold') threshold = numberOf(eq.value, 'relevance_threshold');
      else return;
      replace(trueConstant());
    };
    await walk(statement, (n) => {
      if (n.type === 'SELECT_NODE' && contains(n.from_table, ref.node))
        cut(n.where_clause as AstNode | null, (x) => {
          n.where_clause = x;
        });
    });
    const view = `__mindledger_kb_${i}`;
    Object.assign(ref.node, {
      alias: ref.node.alias || ref.name,
      schema_name: '',
      catalog_name: '',
      table_name: view,
    });
    searches.push({ view, project: ref.project, name: ref.name, question, alpha, threshold });
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
) => {
  const views: string[] = [];
  const tables: string[] = [];
  for (const [i, s] of searches.entries()) {
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
      body = searchSql({
        kbId: source.kbId,
        dimensions: source.dimensions!,
        vectorTable: question.vectorTable,
        termsTable: question.termsTable,
        alpha: s.alpha ?? source.alpha,
        metadataColumns: metadata,
      });
    }
    if (s.threshold !== null) body = `SELECT * FROM (${body}) AS hits WHERE relevance >= ${s.threshold}`;
    views.push(quoteIdent(s.view));
    await c.run(`CREATE OR REPLACE TEMP VIEW ${quoteIdent(s.view)} AS ${body}`);
  }
  return { views, tables };
};
