import { BIGINT, BOOLEAN, DOUBLE, VARCHAR, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { appendColumns } from '../../../duckdb/appendColumns';
import type { ColumnBatch } from '../../../engines/ml/dataset';
import { parseSelect, printSelect, requiredNodeAt, type AstNode } from '../../pipeline/ast';
import { quoteIdent } from '../../../shared/quoting';
import { NO_NARROWING, type InputNarrowing } from './predictionInput';

/**
 * The temporary tables a query's computed rows (predictions, forecasts, agents' answers) are loaded
 * into, and the join rewrite that pairs them with their inputs: DuckDB runs the rewritten query.
 */

/**
 * Rows held as columns: what the other side of a prediction join is read as, and what a
 * computation answers with. Each column has `length` values.
 */
export type Columns = { readonly length: number; readonly values: Readonly<Record<string, unknown[]>> };

/** A `Columns` seen as the model's input batch (a column it lacks is missing in every row). */
export const batchOf = (columns: Columns): ColumnBatch => ({
  length: columns.length,
  column: (name) => columns.values[name],
});

/** Row objects with the given keys, in order, from columns. */
const rowsOf = (columns: Columns, names: readonly string[] = Object.keys(columns.values)) =>
  Array.from({ length: columns.length }, (_, r) =>
    Object.fromEntries(names.map((name) => [name, columns.values[name]?.[r]])),
  );

/** Columns of the given names from row objects. */
const columnsOfRows = (names: readonly string[], rows: readonly Record<string, unknown>[]): Columns => ({
  length: rows.length,
  values: Object.fromEntries(names.map((name) => [name, rows.map((row) => row[name])])),
});

/** What a model or an agent computes for a query: its columns, and the rows for given inputs. */
export type Computation = {
  columns: readonly string[];
  rows: (inputs: Record<string, unknown>[]) => Promise<Record<string, unknown>[]>;
  /**
   * A trained model reads its inputs as columns: the answer's columns for a batch, without row
   * objects on either side (the same answers `rows` gives).
   */
  columnsFor?: (inputs: Columns) => Promise<Columns>;
};

/** The computation's answer for inputs held as columns, through `columnsFor` where it has one. */
export const computeColumns = async (compute: Computation, inputs: Columns): Promise<Columns> =>
  compute.columnsFor
    ? compute.columnsFor(inputs)
    : columnsOfRows(compute.columns, await compute.rows(rowsOf(inputs)));

/** A plain table reference in DuckDB's AST: a temporary table put where a model or a join side was. */
export const baseTable = (table: string, alias: string): AstNode => ({
  type: 'BASE_TABLE',
  alias,
  sample: null,
  query_location: 0,
  schema_name: '',
  table_name: table,
  column_name_alias: [],
  catalog_name: '',
  at_clause: null,
});

type ColumnType = 'BOOLEAN' | 'BIGINT' | 'DOUBLE' | 'VARCHAR';

/** A temporary table's column type from its JS values: all booleans, all safe integers, all numbers, or text. */
const columnType = (values: readonly unknown[] | undefined): ColumnType => {
  let seen = false;
  let booleans = true;
  let numbers = true;
  let integers = true;
  for (const v of values ?? []) {
    if (v === null || v === undefined) continue;
    seen = true;
    if (typeof v !== 'boolean') booleans = false;
    if (typeof v !== 'number') numbers = integers = false;
    // Integers past 2^53 are doubles already, and past 2^63 a BIGINT would wrap: DOUBLE keeps them.
    else if (!Number.isSafeInteger(v)) integers = false;
    if (!booleans && !numbers) break;
  }
  if (!seen) return 'VARCHAR';
  return booleans ? 'BOOLEAN' : numbers ? (integers ? 'BIGINT' : 'DOUBLE') : 'VARCHAR';
};

const DUCKDB_TYPES = { BOOLEAN, BIGINT, DOUBLE, VARCHAR } as const;

/** A value as its column stores it (text columns hold non-strings as JSON). */
const stored = (type: ColumnType, v: unknown): DuckDBValue => {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'DOUBLE':
    case 'BOOLEAN':
      return v as number | boolean;
    case 'BIGINT':
      return BigInt(v as number);
    case 'VARCHAR':
      return typeof v === 'string' ? v : JSON.stringify(v);
  }
};

/** Rows into a typed temporary table through the appender (types from the values). */
export const loadRows = (
  c: DuckDBConnection,
  temps: string[],
  temp: string,
  names: readonly string[],
  rows: readonly Record<string, unknown>[],
) => loadColumns(c, temps, temp, names, columnsOfRows(names, rows));

/**
 * Columns into a typed temporary table (types from the values), appended a data chunk at a time.
 */
export const loadColumns = async (
  c: DuckDBConnection,
  temps: string[],
  temp: string,
  names: readonly string[],
  columns: Columns,
) => {
  temps.push(temp);
  const types = names.map((name) => columnType(columns.values[name]));
  const q = quoteIdent;
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${q(temp)} (${names.map((name, i) => `${q(name)} ${types[i]}`).join(', ')})`,
  );
  if (names.length === 0) return;
  const appender = await c.createAppender(temp);
  try {
    const valuesOf = names.map((name) => columns.values[name]);
    appendColumns(
      appender,
      types.map((type) => DUCKDB_TYPES[type]),
      columns.length,
      (i, r) => stored(types[i]!, valuesOf[i]?.[r]),
    );
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
};

/**
 * The other side of the join, materialised in DuckDB and read as columns: its rows, in the order
 * they will be paired, narrowed to what the answer needs (see `inputNarrowing`).
 */
export const joinedColumns = async (
  c: DuckDBConnection,
  temps: string[],
  join: AstNode,
  node: AstNode,
  narrowing: InputNarrowing = NO_NARROWING,
): Promise<{ alias: string; columns: Columns }> => {
  const other = requiredNodeAt(join, join.left === node ? 'right' : 'left');
  const { conditions, limit } = narrowing;
  const template = await parseSelect(
    c,
    `SELECT * FROM __mindledger_source${conditions.length > 1 ? ' WHERE true AND true' : ''}${
      limit === null ? '' : ` LIMIT ${limit}`
    }`,
  );
  const select = requiredNodeAt(template, 'node');
  select.from_table = other;
  if (conditions.length === 1) select.where_clause = structuredClone(conditions[0]);
  else if (conditions.length > 1)
    requiredNodeAt(select, 'where_clause').children = conditions.map((condition) =>
      structuredClone(condition),
    );
  const source = await printSelect(c, template);
  temps.push('__mindledger_input');
  await c.run(`CREATE OR REPLACE TEMP TABLE __mindledger_input AS ${source}`);
  const reader = await c.runAndReadAll('SELECT * FROM __mindledger_input');
  const names = reader.columnNames();
  // JSON values carry 64-bit integers and decimals as text; the model, and the columns it echoes,
  // read them as the numbers they are.
  const numeric = reader
    .columnTypes()
    .map((type) => /^(BIGINT|UBIGINT|HUGEINT|UHUGEINT|DECIMAL)/.test(type.toString()));
  const asNumber = (v: unknown) => {
    if (typeof v !== 'string') return v;
    const n = Number(v);
    return Number.isFinite(n) && (Number.isSafeInteger(n) || !/^-?\d+$/.test(v)) ? n : v;
  };
  const values: Record<string, unknown[]> = {};
  reader.getColumnsJson().forEach((column, i) => {
    // A name twice (a join's `SELECT *`): the later column wins, as it did in a row object.
    values[names[i]!] = numeric[i] ? column.map(asNumber) : column;
  });
  return {
    alias: String(other.alias || other.table_name || 'data'),
    columns: { length: reader.currentRowCount, values },
  };
};

/** The join rewritten to pair the input with the computed rows position by position. */
export const pairPositionally = (join: AstNode, node: AstNode, inputAlias: string, outputAlias: string) => {
  const input = baseTable('__mindledger_input', inputAlias);
  const output = baseTable('__mindledger_prediction', outputAlias);
  if (join.left === node) {
    join.left = output;
    join.right = input;
  } else {
    join.left = input;
    join.right = output;
  }
  join.ref_type = 'POSITIONAL';
  join.condition = null;
  join.join_type = 'INNER';
};
