import { quoteIdent, quoteString } from '../../shared/quoting';
import { kbTables, type FieldType } from './layout';

/**
 * How a knowledge base is searched: by vector (cosine similarity to the question's embedding), by
 * keyword (BM25 over the chunks' terms), or both: relevance = alpha × vector + (1 − alpha) ×
 * keyword, each in [0, 1] (the keyword score divided by the best one of this search).
 */
type KbSearch = {
  readonly kbId: number | bigint;
  readonly dimensions: number;
  /** A table, or a parenthesised query, of one row, column `V FLOAT[dimensions]`: the question's embedding. */
  readonly vectorTable: string;
  /** A table, or a parenthesised query, of the question's terms, column `TERM`. */
  readonly termsTable: string;
  /** 1: vector only; 0: keyword only. */
  readonly alpha: number;
  /** Metadata fields offered as columns of their own (for `WHERE author = …`), typed. */
  readonly metadataColumns: readonly MetadataColumn[];
};

const K1 = 1.2;
const B = 0.75;
/**
 * A chunk's BM25 score is summed over its terms in fixed point (units of 2^-40, exact integers):
 * a sum of doubles depends on the order DuckDB meets the postings (the order they are stored in,
 * which compaction changes, and how its threads split them), and a search answers the same
 * whatever that order. A term's part is below 2^6 (ln of the chunks' count, × 2.2), so a sum of
 * thousands of terms stays far inside BIGINT's 2^63.
 */
const SCALE = 2 ** 40;

const weightOf = (alpha: number) => Math.min(1, Math.max(0, alpha));

/**
 * Whether a search weighted `alpha` reads the question's terms: vector only (1), the keyword side
 * weighs nothing, so it is not computed (it is most of the cost) and `termsTable` is not named.
 */
export const searchesKeywords = (alpha: number) => weightOf(alpha) < 1;

/** What a search answers with before its distance and relevance, read from chunk `c`. */
const PAYLOAD = 'c.DOC_ID AS id, c.CHUNK_ID AS chunk_id, c.CONTENT AS chunk_content, c.METADATA AS metadata';

/**
 * A search's order: the most relevant first; equal relevances by insert position and chunk index,
 * then by row id (the chunk's place in its insert: chunks of two documents of one insert at the same
 * index), so the order is one whatever DuckDB's sort, and a top N (`topSearchSql`) keeps the rows
 * the whole order starts with.
 */
const order = (at: string) => `relevance DESC, ${at}.POSITION, ${at}.CHUNK_INDEX, ${at}.ROW_ID`;

/**
 * Every chunk with `columns` (read from chunk `c`), its distance and relevance, then `after`, in
 * the search's order, then `tail` (a LIMIT).
 */
const rankingSql = (s: KbSearch, columns: string, after: string, tail: string) => {
  const t = kbTables(s.kbId);
  const alpha = weightOf(s.alpha);
  if (!searchesKeywords(alpha))
    return `SELECT ${columns},
      1 - array_cosine_similarity(c.EMBEDDING, q.V) AS distance,
      greatest(array_cosine_similarity(c.EMBEDDING, q.V), 0) AS relevance${after}
    FROM ${t.chunks} AS c CROSS JOIN ${s.vectorTable} AS q
    ORDER BY ${order('c')}${tail}`;
  // The postings of the question's terms, read once (by term id: integers, not 70-odd strings a
  // chunk); each term's document frequency is counted from them, not from the whole terms table.
  // (The CTEs sit between this ORDER BY and a LIMIT over the view, so DuckDB sorts every chunk
  // rather than keep a top N; a shape without them lets DuckDB pick the view as a join's build
  // side, losing this order under `… JOIN t … LIMIT n`: test/knowledgeBases/sql.spec.ts.)
  return `WITH st AS (SELECT count(*)::DOUBLE AS n, coalesce(avg(TERMS), 0)::DOUBLE AS avgdl FROM ${t.chunks}),
    p AS MATERIALIZED (SELECT tm.ROW_ID, tm.TERM_ID, tm.TF, tm.LEN FROM ${t.terms} AS tm
           WHERE tm.TERM_ID IN (SELECT v.TERM_ID FROM ${t.vocabulary} AS v WHERE v.TERM IN (SELECT TERM FROM ${s.termsTable}))),
    df AS (SELECT p.TERM_ID, count(*)::DOUBLE AS df FROM p GROUP BY p.TERM_ID),
    bm AS (SELECT p.ROW_ID, sum(round(${SCALE} * ln(1 + (st.n - df.df + 0.5) / (df.df + 0.5)) * p.TF * ${K1 + 1}
                 / (p.TF + ${K1} * (${1 - B} + ${B} * p.LEN / greatest(st.avgdl, 1))))::BIGINT) / ${SCALE} AS score
           FROM p JOIN df ON df.TERM_ID = p.TERM_ID CROSS JOIN st
           GROUP BY p.ROW_ID),
    best AS (SELECT max(score) AS top FROM bm)
  SELECT ${columns},
      1 - array_cosine_similarity(c.EMBEDDING, q.V) AS distance,
      ${alpha} * greatest(array_cosine_similarity(c.EMBEDDING, q.V), 0)
        + ${1 - alpha} * coalesce(bm.score / nullif(best.top, 0), 0) AS relevance${after}
    FROM ${t.chunks} AS c CROSS JOIN ${s.vectorTable} AS q CROSS JOIN best
    LEFT JOIN bm ON bm.ROW_ID = c.ROW_ID
    ORDER BY ${order('c')}${tail}`;
};

/** The SQL of a search: every chunk with its distance and relevance, the most relevant first. */
export const searchSql = (s: KbSearch) => rankingSql(s, PAYLOAD, metadataColumnsSql(s.metadataColumns), '');

/**
 * The SQL of a search's `limit` most relevant chunks: the same rows, in the same order, as the first
 * `limit` of `searchSql`. The chunks are ranked without their text and metadata, and only those kept
 * are read whole, by DuckDB's own row number (`rowid`, `AT`: within one statement a row's place, so
 * DuckDB reads those rows' row groups only) rather than every chunk's text carried through the sort.
 */
export const topSearchSql = (s: KbSearch, limit: number) => {
  const ranked = rankingSql(
    s,
    'c.rowid AS AT, c.ROW_ID, c.POSITION, c.CHUNK_INDEX',
    '',
    ` LIMIT ${Math.max(1, Math.floor(limit))}`,
  );
  return `SELECT ${PAYLOAD}, r.distance, r.relevance${metadataColumnsSql(s.metadataColumns)}
    FROM (${ranked}) AS r JOIN ${kbTables(s.kbId).chunks} AS c ON c.rowid = r.AT
    ORDER BY ${order('r')}`;
};

export type MetadataColumn = { readonly name: string; readonly type: FieldType };

/** A field's value as its column: text as text, numbers and booleans typed (a stray value: NULL). */
const metadataColumnsSql = (columns: readonly MetadataColumn[]) =>
  columns
    .map(({ name, type }) => {
      const path = quoteString(`$.${JSON.stringify(name)}`);
      const value =
        type === 'VARCHAR'
          ? `json_extract_string(c.METADATA, ${path})`
          : type === 'JSON'
            ? `json_extract(c.METADATA, ${path})`
            : `TRY_CAST(json_extract_string(c.METADATA, ${path}) AS ${type})`;
      return `, ${value} AS ${quoteIdent(name)}`;
    })
    .join('');

/** Every chunk of a knowledge base, no question asked (distance and relevance null). */
export const listSql = (kbId: number | bigint, metadataColumns: readonly MetadataColumn[]) => {
  const t = kbTables(kbId);
  const metadata = metadataColumnsSql(metadataColumns);
  return `SELECT c.DOC_ID AS id, c.CHUNK_ID AS chunk_id, c.CONTENT AS chunk_content, c.METADATA AS metadata,
      NULL::DOUBLE AS distance, NULL::DOUBLE AS relevance${metadata}
    FROM ${t.chunks} AS c ORDER BY c.POSITION, c.DOC_ID, c.CHUNK_INDEX`;
};

/** The columns a knowledge base answers with, for one that holds nothing yet. */
export const emptySql = (metadataColumns: readonly MetadataColumn[]) =>
  `SELECT NULL::VARCHAR AS id, NULL::VARCHAR AS chunk_id, NULL::VARCHAR AS chunk_content, NULL::JSON AS metadata,
    NULL::DOUBLE AS distance, NULL::DOUBLE AS relevance${metadataColumns.map((m) => `, NULL::${m.type} AS ${quoteIdent(m.name)}`).join('')} WHERE false`;
