import fs from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { FileFormat, FileUploaded } from '../../events';
import { documentKindOf, isDocumentKind } from '../engines/documents/convert';
import { invalid, isDomainError } from '../shared/errors';
import { FILES_SCHEMA } from '../shared/names';
import { quoteIdent, quoteString } from '../shared/quoting';
import { countAndInferColumnTypes } from './columnTypes';

const lit = quoteString;
const ident = quoteIdent;

export type CsvDialect = NonNullable<FileUploaded['data']['csv']>;
export type Column = { name: string; type: string };

/**
 * A document's table (PDF, DOCX, HTML, Markdown, text): one row per section, in document order.
 * MindsDB's file handler answers documents as `content` and `metadata`; `section` and `title` say
 * where in the document a row's text is (a PDF's page number, a heading).
 */
export const DOCUMENT_COLUMNS: readonly Column[] = [
  { name: 'section', type: 'BIGINT' },
  { name: 'title', type: 'VARCHAR' },
  { name: 'content', type: 'VARCHAR' },
  { name: 'metadata', type: 'JSON' },
];

/** A document's blob holds its converted sections as NDJSON; every other file, its bytes as uploaded. */
export const storedFormat = (format: FileFormat) => (isDocumentKind(format) ? 'ndjson' : format);

const columnsClause = (columns: readonly Column[]) =>
  `columns = {${columns.map((c) => `${lit(c.name)}: ${lit(c.type)}`).join(', ')}}`;

/** DuckDB's default largest JSON object (16 MiB): its read buffer is sized by the maximum. */
const JSON_OBJECT_BYTES = 16 * 1024 * 1024;

/**
 * A document's sections as its blob holds them (NDJSON, one line a row). A section may be larger
 * than DuckDB's default largest object (a long document without headings): no line is longer than
 * the file, so the file's size bounds it (DuckDB sizes its buffer by it: only raised when needed).
 */
export const documentSource = (path: string) => {
  const largest = Math.max(JSON_OBJECT_BYTES, fs.statSync(path).size + 1);
  return `read_json(${lit(path)}, format = 'newline_delimited', maximum_object_size = ${largest}, ${columnsClause(DOCUMENT_COLUMNS)})`;
};

/** What DuckDB reads, with every choice spelled out (nothing left to a sniffer at replay). */
const source = (path: string, format: FileFormat, csv: CsvDialect | null, columns?: Column[]) => {
  switch (format) {
    case 'pdf':
    case 'docx':
    case 'html':
    case 'md':
    case 'txt':
      return documentSource(path);
    case 'csv':
    case 'tsv': {
      const d = csv!;
      return `read_csv(${lit(path)}, all_varchar = true, delim = ${lit(d.delimiter)}, quote = ${lit(d.quote)}, escape = ${lit(d.escape)}, header = ${d.header}, encoding = 'utf-8')`;
    }
    case 'json':
    case 'ndjson': {
      const layout = format === 'json' ? 'array' : 'newline_delimited';
      // Analysis (no recorded columns yet) infers from every record, not a sample (a later value the
      // sampled type cannot hold would fail the replay's load), and makes every top-level key a
      // column (DuckDB folds many or sparse keys into one MAP column, a name no record has).
      const typed = columns?.length
        ? `, ${columnsClause(columns)}`
        : ', sample_size = -1, map_inference_threshold = -1, field_appearance_threshold = 0';
      return `read_json(${lit(path)}, format = ${lit(layout)}${typed})`;
    }
    case 'parquet':
      return `read_parquet(${lit(path)})`;
  }
};

const sniffWith = async (
  c: DuckDBConnection,
  path: string,
  format: FileFormat,
  quote?: string,
): Promise<CsvDialect> => {
  const options = `${format === 'tsv' ? ", delim = '\\t'" : ''}${quote ? `, quote = ${lit(quote)}` : ''}`;
  const reader = await c.runAndReadAll(
    `SELECT Delimiter, Quote, Escape, HasHeader FROM sniff_csv(${lit(path)}${options})`,
  );
  const [delimiter, sniffedQuote, escape, header] = reader.getRowsJS()[0] as [
    string,
    string,
    string,
    boolean,
  ];
  // DuckDB reports "(empty)" when the sample had no quoting; the standard quote is harmless then.
  const orQuote = (v: string) => (!v || v === '(empty)' ? '"' : v);
  return { delimiter, quote: orQuote(sniffedQuote), escape: orQuote(escape), header };
};

/**
 * The file's dialect. The quote is the standard `"` (what MindsDB's pandas reads with) unless the
 * file is only a consistent table with another: DuckDB's sniffer, left free, may take `'` for the
 * quote of a file whose cells merely hold apostrophes (`10,"apple","a,'","a',"` read as five
 * headless columns); with `"` it finds the same delimiter, the header and four columns. A file
 * quoted with `'` throughout finds no consistent table with `"` (the sniffer falls back to another
 * delimiter) and keeps `'`.
 */
const sniff = async (c: DuckDBConnection, path: string, format: FileFormat): Promise<CsvDialect> => {
  const free = await sniffWith(c, path, format);
  if (free.quote === '"') return free;
  const standard = await sniffWith(c, path, format, '"').catch(() => null);
  return standard && standard.delimiter === free.delimiter ? standard : free;
};

/** Column types a JSON file records as they are; anything nested is kept as JSON text instead. */
const SCALAR_TYPE =
  /^(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|VARCHAR|DATE|TIME|TIMESTAMP|TIMESTAMP WITH TIME ZONE|UUID|JSON)(\[\])?$/;

/**
 * A recorded type must read back the same on every replay, so only types whose text DuckDB parses
 * back are recorded: a struct with an unnamed field prints as `STRUCT(BIGINT)`, which it cannot
 * read again (that one event made every start of the service fail). Nested values load as JSON.
 */
const recordableType = (duckType: string) => (SCALAR_TYPE.test(duckType) ? duckType : 'JSON');

/** A JSON file's top-level keys become column names: each must be one (not empty, no NUL). */
const checkJsonKeys = async (c: DuckDBConnection, path: string, format: FileFormat, maxColumns: number) => {
  const layout = format === 'json' ? 'array' : 'newline_delimited';
  const keys = (
    await c.runAndReadAll(
      `SELECT DISTINCT unnest(json_keys(json)) AS k FROM read_json_objects(${lit(path)}, format = ${lit(layout)}) LIMIT ${maxColumns + 1}`,
    )
  ).getRowsJS() as [string][];
  if (keys.length > maxColumns)
    throw invalid(`The file has more than ${maxColumns} columns (FILE_MAX_COLUMNS)`, 'Too many columns');
  const bad = keys.find(([k]) => k === '' || k.includes('\u0000'));
  if (bad)
    throw invalid(
      `A key of the file's objects is ${bad[0] === '' ? 'empty' : 'not a usable name (it holds a NUL character)'}: each top-level key becomes a column name`,
      'Unusable column name',
    );
  // Column names are case-insensitive: DuckDB would rename one of the two, and a replay, reading
  // the recorded names, would find no such key and load nulls.
  const seen = new Map<string, string>();
  for (const [k] of keys) {
    const other = seen.get(k.toLowerCase());
    if (other !== undefined)
      throw invalid(
        `The keys ${JSON.stringify(other)} and ${JSON.stringify(k)} differ only in case: each top-level key becomes a column name, and column names ignore case`,
        'Unusable column name',
      );
    seen.set(k.toLowerCase(), k);
  }
};

/** Every column needs a name an event can hold and SQL can use. */
const checkColumnNames = (names: readonly string[]) => {
  const bad = names.find((n) => n === '' || n.includes('\u0000'));
  if (bad !== undefined)
    throw invalid(
      `The column ${JSON.stringify(bad)} has no usable name (${bad === '' ? 'it is empty' : 'it holds a NUL character'})`,
      'Unusable column name',
    );
};

/**
 * Reads an uploaded file once to decide how it will always be loaded: the CSV dialect, each
 * column's type (a few bad cells, such as "640,56" in a number column, do not demote the column:
 * they load as null) and the row count. The row count is read through exactly the source a replay
 * will use, so a file accepted here is a file the projection can load, forever. Throws a 400 when
 * DuckDB cannot read the file, or its columns cannot be named or are too many.
 */
export const analyzeFile = async (
  c: DuckDBConnection,
  path: string,
  format: FileFormat,
  limits: { maxColumns: number } = { maxColumns: 1024 },
) => {
  try {
    const csv = format === 'csv' || format === 'tsv' ? await sniff(c, path, format) : null;
    if (format === 'json' || format === 'ndjson') await checkJsonKeys(c, path, format, limits.maxColumns);
    const from = source(path, format, csv);
    const described = (await c.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`)).getRowObjectsJS() as {
      column_name: string;
      column_type: string;
    }[];
    if (described.length > limits.maxColumns)
      throw invalid(
        `The file has ${described.length} columns; at most ${limits.maxColumns} are accepted (FILE_MAX_COLUMNS)`,
        'Too many columns',
      );
    checkColumnNames(described.map((d) => d.column_name));
    if (!csv) {
      const columns: Column[] = described.map((d) => ({
        name: d.column_name,
        type: format === 'parquet' ? d.column_type : recordableType(d.column_type),
      }));
      const replayed = source(path, format, null, format === 'parquet' ? undefined : columns);
      // Every value is converted here as the replay will convert it (a bare count(*) skips that):
      // a value the recorded types cannot hold is a 400 now, not a projection failing later.
      const rowCount = Number(
        (
          await c.runAndReadAll(`SELECT count(*), bit_xor(hash(t)) FROM (SELECT * FROM ${replayed}) t`)
        ).getRowsJS()[0]![0],
      );
      return { csv, columns, rowCount };
    }
    // Counted in the pass that checks the types (the sample goes by an estimate): one read fewer.
    const { rowCount, columns } = await countAndInferColumnTypes(
      c,
      from,
      described.map((d) => d.column_name),
      await estimateRows(path),
    );
    return { csv, columns, rowCount };
  } catch (error) {
    if (isDomainError(error)) throw error;
    const message = ((error as { message?: string }).message ?? String(error)).split(path).join('the file');
    throw invalid(`The file cannot be read as ${format}: ${message}`, 'Unreadable file');
  }
};

/** The statement that (re)creates `files.<name>` from the recorded facts. */
export const createFileTableSql = (name: string, path: string, d: FileUploaded['data']) => {
  const from = source(
    path,
    d.format,
    d.csv,
    // Recorded before nested types were kept as JSON, an event may name a type DuckDB cannot read back.
    d.format === 'json' || d.format === 'ndjson'
      ? d.columns.map((col) => ({ name: col.name, type: recordableType(col.type) }))
      : undefined,
  );
  const select =
    d.csv === null
      ? '*'
      : d.columns
          .map((col) =>
            col.type === 'VARCHAR'
              ? ident(col.name)
              : `TRY_CAST(nullif(trim(${ident(col.name)}), '') AS ${col.type}) AS ${ident(col.name)}`,
          )
          .join(', ');
  return `CREATE OR REPLACE TABLE ${FILES_SCHEMA}.${ident(name)} AS SELECT ${select} FROM ${from}`;
};

/** Bytes read from a text file's start to estimate its lines by. */
const ESTIMATE_HEAD_BYTES = 64 * 1024;

/**
 * About how many lines a text file has: its size over the mean length of the lines in its first
 * 64 KiB (its size when they hold no line break: more than it can have). Only an estimate: what is
 * decided by it is checked against the counted rows (columnTypes.ts).
 */
const estimateRows = async (path: string) => {
  const handle = await fs.promises.open(path, 'r');
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(Math.min(size, ESTIMATE_HEAD_BYTES));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    let breaks = 0;
    const newline = head.includes(0x0a) ? 0x0a : 0x0d;
    for (let at = head.indexOf(newline); at !== -1 && at < bytesRead; at = head.indexOf(newline, at + 1))
      breaks++;
    if (bytesRead >= size) return breaks + 1;
    return breaks === 0 ? size : Math.ceil((size * breaks) / bytesRead);
  } finally {
    await handle.close();
  }
};

/** The first 512 bytes of a file (fewer: zeros after): what its format is told by without a name. */
export const readHead = async (path: string) => {
  const head = Buffer.alloc(512);
  const handle = await fs.promises.open(path, 'r');
  try {
    await handle.read(head, 0, 512, 0);
  } finally {
    await handle.close();
  }
  return head;
};

/** Picks the format from the uploaded file's name, else from its first bytes (a document's first). */
export const detectFormat = (originalName: string | null, head: Buffer): FileFormat => {
  const ext = originalName?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  if (ext === 'csv') return 'csv';
  if (ext === 'tsv' || ext === 'tab') return 'tsv';
  if (ext === 'json') return head.toString('utf8').trimStart().startsWith('{') ? 'ndjson' : 'json';
  if (ext === 'ndjson' || ext === 'jsonl') return 'ndjson';
  if (ext === 'parquet' || ext === 'pq') return 'parquet';
  // A table's extension wins over its first bytes; a document is told by either.
  const document = documentKindOf(originalName, head);
  if (document) return document;
  if (head.subarray(0, 4).toString('latin1') === 'PAR1') return 'parquet';
  const text = head
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (text.startsWith('[')) return 'json';
  if (text.startsWith('{')) return 'ndjson';
  return 'csv';
};
