import { invalid } from '../../shared/errors';
import { quoteIdent } from '../../shared/quoting';

/** The DuckDB schema holding every knowledge base's chunks and their terms. */
export const KB_SCHEMA = 'mdb_kb';

/** The names of one knowledge base's tables in schema mdb_kb, unquoted. */
export const kbTableNames = (kbId: number | bigint) =>
  ({
    chunks: `kb_${kbId}`,
    terms: `kb_${kbId}_terms`,
    vocabulary: `kb_${kbId}_vocabulary`,
    fields: `kb_${kbId}_fields`,
  }) as const;

/**
 * One knowledge base's tables: its chunks (with a fixed-size vector each), their terms (BM25:
 * postings by term id, with the chunk's length), the vocabulary naming the term ids, its fields.
 */
export const kbTables = (kbId: number | bigint) => {
  const names = kbTableNames(kbId);
  const at = (name: string) => `${KB_SCHEMA}.${quoteIdent(name)}`;
  return {
    chunks: at(names.chunks),
    terms: at(names.terms),
    vocabulary: at(names.vocabulary),
    fields: at(names.fields),
  };
};

/**
 * A chunk's row id (`ROW_ID`, what its terms name it by): the position of the event that inserted
 * it and its place among that event's chunks. The same on a rebuild, whatever the batches, and
 * never given twice (a deletion frees none).
 */
export const CHUNKS_PER_EVENT = 2 ** 24;

/**
 * An insert cut into more chunks than one event's row ids can number is refused before it is
 * recorded (a 400), not where the projection numbers its chunks (a throw there would stop it).
 */
export const requireChunksFitOneInsert = (chunks: number) => {
  if (chunks > CHUNKS_PER_EVENT)
    throw invalid(
      `The documents are cut into ${chunks} chunks; one insert holds at most ${CHUNKS_PER_EVENT}: insert fewer documents at a time, or use a larger chunk_size`,
      'Too many chunks',
    );
};
export const chunkRowId = (position: bigint, ordinal: number) => {
  if (ordinal >= CHUNKS_PER_EVENT)
    throw new Error(`an insert of more than ${CHUNKS_PER_EVENT} chunks cannot be indexed`);
  return position * BigInt(CHUNKS_PER_EVENT) + BigInt(ordinal);
};

/** The SQL type a metadata field is offered as (the widest its values need). */
export type FieldType = 'BIGINT' | 'DOUBLE' | 'BOOLEAN' | 'VARCHAR' | 'JSON';

/** The type of one metadata value; null for SQL NULL (it fits any type). */
export const fieldTypeOf = (value: unknown): FieldType | null => {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return 'BOOLEAN';
  if (typeof value === 'number') return Number.isInteger(value) ? 'BIGINT' : 'DOUBLE';
  if (typeof value === 'string') return 'VARCHAR';
  return 'JSON';
};

/** Two types one field has had: integers widen to doubles, anything else mixed is text. */
export const widerFieldType = (a: FieldType | null, b: FieldType | null): FieldType | null => {
  if (a === null) return b;
  if (b === null || a === b) return a;
  if ((a === 'BIGINT' && b === 'DOUBLE') || (a === 'DOUBLE' && b === 'BIGINT')) return 'DOUBLE';
  return 'VARCHAR';
};

export const createKbTablesSql = (kbId: number | bigint, dimensions: number) => {
  const t = kbTables(kbId);
  return [
    `CREATE TABLE IF NOT EXISTS ${t.chunks} (CHUNK_ID VARCHAR, DOC_ID VARCHAR, CHUNK_INDEX INTEGER, CONTENT VARCHAR, METADATA JSON, TERMS INTEGER, POSITION BIGINT, EMBEDDING FLOAT[${dimensions}], ROW_ID BIGINT)`,
    // A posting: the term (by id) in the chunk (by row id), how often, and the chunk's length (its TERMS).
    `CREATE TABLE IF NOT EXISTS ${t.terms} (ROW_ID BIGINT, TERM_ID INTEGER, TF INTEGER, LEN INTEGER)`,
    // Every term the knowledge base's chunks have had, numbered in the order first appended (never
    // renumbered nor removed, so the numbers are the same on a rebuild whatever the batches).
    `CREATE TABLE IF NOT EXISTS ${t.vocabulary} (TERM VARCHAR, TERM_ID INTEGER)`,
    // A field and its type, one row each (no key: the projection replaces a row by a deletion and an insert).
    `CREATE TABLE IF NOT EXISTS ${t.fields} (FIELD VARCHAR, TYPE VARCHAR)`,
  ];
};

/**
 * The postings rewritten in term-id order (then row id: one order, whatever the batches that
 * appended them), so DuckDB's zone maps skip every row group without the question's terms: at
 * 100,000 chunks the postings of a question are read in 6 ms instead of 49. The same rows, so a
 * search answers the same (its BM25 sum does not depend on the order it reads them: search.ts).
 */
export const compactPostingsSql = (kbId: number | bigint) => {
  const { terms } = kbTables(kbId);
  return `CREATE OR REPLACE TABLE ${terms} AS SELECT ROW_ID, TERM_ID, TF, LEN FROM ${terms} ORDER BY TERM_ID, ROW_ID`;
};

export const dropKbTablesSql = (kbId: number | bigint) => {
  const t = kbTables(kbId);
  return [
    `DROP TABLE IF EXISTS ${t.chunks}`,
    `DROP TABLE IF EXISTS ${t.terms}`,
    `DROP TABLE IF EXISTS ${t.vocabulary}`,
    `DROP TABLE IF EXISTS ${t.fields}`,
  ];
};

/** A chunk's id: its document, its place, and the characters it covers (MindsDB's shape). */
export const chunkId = (docId: string, index: number, total: number, start: number, end: number) =>
  `${docId}:${index + 1}of${total}:${start}to${end}`;
