import type { DuckDBConnection } from '@duckdb/node-api';
import type { FileFormat, FileUploaded } from '../../events';
import { invalid } from '../shared/errors';

export const FILES_SCHEMA = 'mdb_files';

const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

export type CsvDialect = NonNullable<FileUploaded['data']['csv']>;
export type Column = { name: string; type: string };

/** What DuckDB reads, with every choice spelled out (nothing left to a sniffer at replay). */
const source = (path: string, format: FileFormat, csv: CsvDialect | null, columns?: Column[]) => {
  switch (format) {
    case 'csv':
    case 'tsv': {
      const d = csv!;
      return `read_csv(${lit(path)}, all_varchar = true, delim = ${lit(d.delimiter)}, quote = ${lit(d.quote)}, escape = ${lit(d.escape)}, header = ${d.header}, encoding = 'utf-8')`;
    }
    case 'json':
    case 'ndjson': {
      const layout = format === 'json' ? 'array' : 'newline_delimited';
      const typed = columns?.length
        ? `, columns = {${columns.map((c) => `${lit(c.name)}: ${lit(c.type)}`).join(', ')}}`
        : '';
      return `read_json(${lit(path)}, format = ${lit(layout)}${typed})`;
    }
    case 'parquet':
      return `read_parquet(${lit(path)})`;
  }
};

/** Types a text column can take, tried in order; the first that fits nearly every value wins. */
const CANDIDATES = ['BOOLEAN', 'BIGINT', 'DOUBLE', 'DATE', 'TIMESTAMP'] as const;
/** A column keeps a type when at most this share of its non-empty cells fail to convert (they load as null). */
const TOLERATED_INVALID = 0.02;

const sniff = async (c: DuckDBConnection, path: string, format: FileFormat): Promise<CsvDialect> => {
  const reader = await c.runAndReadAll(
    `SELECT Delimiter, Quote, Escape, HasHeader FROM sniff_csv(${lit(path)}${format === 'tsv' ? ", delim = '\\t'" : ''})`,
  );
  const [delimiter, quote, escape, header] = reader.getRowsJS()[0] as [string, string, string, boolean];
  // DuckDB reports "(empty)" when the sample had no quoting; the standard quote is harmless then.
  const orQuote = (v: string) => (!v || v === '(empty)' ? '"' : v);
  return { delimiter, quote: orQuote(quote), escape: orQuote(escape), header };
};

/**
 * Reads an uploaded file once to decide how it will always be loaded: the CSV dialect, each
 * column's type (a few bad cells, such as "640,56" in a number column, do not demote the column:
 * they load as null) and the row count. Throws a 400 when DuckDB cannot read the file at all.
 */
export const analyzeFile = async (c: DuckDBConnection, path: string, format: FileFormat) => {
  try {
    const csv = format === 'csv' || format === 'tsv' ? await sniff(c, path, format) : null;
    const from = source(path, format, csv);
    const described = (await c.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`)).getRowObjectsJS() as {
      column_name: string;
      column_type: string;
    }[];
    let columns: Column[] = described.map((d) => ({ name: d.column_name, type: d.column_type }));
    if (!csv) {
      const rowCount = Number((await c.runAndReadAll(`SELECT count(*) FROM ${from}`)).getRowsJS()[0]![0]);
      return { csv, columns, rowCount };
    }
    // One pass over the file: the row count and, per column, how many cells each type can hold.
    const checks = described.flatMap((d) => {
      const v = `nullif(trim(${ident(d.column_name)}), '')`;
      return [
        `count(${v})`,
        ...CANDIDATES.map((t) => `count(TRY_CAST(${v} AS ${t}))`),
        // DuckDB casts '4123.8' to BIGINT by rounding: a column is integral only if no value has a fraction.
        `count(CASE WHEN TRY_CAST(${v} AS DOUBLE) <> trunc(TRY_CAST(${v} AS DOUBLE)) THEN 1 END)`,
      ];
    });
    const counts = (await c.runAndReadAll(`SELECT count(*), ${checks.join(', ')} FROM ${from}`))
      .getRowsJS()[0]!
      .map(Number);
    const rowCount = counts[0]!;
    columns = described.map((d, i) => {
      const base = 1 + i * (CANDIDATES.length + 2);
      const nonEmpty = counts[base]!;
      const fractional = counts[base + 1 + CANDIDATES.length]!;
      const fits = (t: (typeof CANDIDATES)[number]) =>
        counts[base + 1 + CANDIDATES.indexOf(t)]! >= nonEmpty * (1 - TOLERATED_INVALID) &&
        (t !== 'BIGINT' || fractional === 0);
      const type = nonEmpty === 0 ? 'VARCHAR' : (CANDIDATES.find(fits) ?? 'VARCHAR');
      return { name: d.column_name, type };
    });
    return { csv, columns, rowCount };
  } catch (error) {
    throw invalid(
      `The file cannot be read as ${format}: ${(error as { message?: string }).message ?? String(error)}`,
      'Unreadable file',
    );
  }
};

/** The statement that (re)creates `files.<name>` from the recorded facts. */
export const createFileTableSql = (name: string, path: string, d: FileUploaded['data']) => {
  const from = source(
    path,
    d.format,
    d.csv,
    d.format === 'json' || d.format === 'ndjson' ? d.columns : undefined,
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

/** Picks the format from the uploaded file's name, else from its first bytes. */
export const detectFormat = (originalName: string | null, head: Buffer): FileFormat => {
  const ext = originalName?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  if (ext === 'csv' || ext === 'txt') return 'csv';
  if (ext === 'tsv' || ext === 'tab') return 'tsv';
  if (ext === 'json') return head.toString('utf8').trimStart().startsWith('{') ? 'ndjson' : 'json';
  if (ext === 'ndjson' || ext === 'jsonl') return 'ndjson';
  if (ext === 'parquet' || ext === 'pq') return 'parquet';
  if (head.subarray(0, 4).toString('latin1') === 'PAR1') return 'parquet';
  const text = head
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (text.startsWith('[')) return 'json';
  if (text.startsWith('{')) return 'ndjson';
  return 'csv';
};
