import { quoteIdent } from '../../shared/quoting';

/** The DuckDB schema holding every knowledge base's chunks and their terms. */
export const KB_SCHEMA = 'mdb_kb';

/** One knowledge base's tables: its chunks (with a fixed-size vector each) and their terms (BM25). */
export const kbTables = (kbId: number | bigint) => ({
  chunks: `${KB_SCHEMA}.${quoteIdent(`kb_${kbId}`)}`,
  terms: `${KB_SCHEMA}.${quoteIdent(`kb_${kbId}_terms`)}`,
  fields: `${KB_SCHEMA}.${quoteIdent(`kb_${kbId}_fields`)}`,
});

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
    `CREATE TABLE IF NOT EXISTS ${t.chunks} (CHUNK_ID VARCHAR, DOC_ID VARCHAR, CHUNK_INDEX INTEGER, CONTENT VARCHAR, METADATA JSON, TERMS INTEGER, POSITION BIGINT, EMBEDDING FLOAT[${dimensions}])`,
    `CREATE TABLE IF NOT EXISTS ${t.terms} (CHUNK_ID VARCHAR, TERM VARCHAR, TF INTEGER)`,
    `CREATE TABLE IF NOT EXISTS ${t.fields} (FIELD VARCHAR PRIMARY KEY, TYPE VARCHAR)`,
  ];
};

export const dropKbTablesSql = (kbId: number | bigint) => {
  const t = kbTables(kbId);
  return [
    `DROP TABLE IF EXISTS ${t.chunks}`,
    `DROP TABLE IF EXISTS ${t.terms}`,
    `DROP TABLE IF EXISTS ${t.fields}`,
  ];
};

/** A chunk's id: its document, its place, and the characters it covers (MindsDB's shape). */
export const chunkId = (docId: string, index: number, total: number, start: number, end: number) =>
  `${docId}:${index + 1}of${total}:${start}to${end}`;
