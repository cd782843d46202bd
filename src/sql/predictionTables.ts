import type { DuckDBConnection } from '@duckdb/node-api';
import { parseSelect, printSelect, type AstNode } from './ast';
import { quoteIdent } from '../shared/quoting';
import { NO_NARROWING, type InputNarrowing } from './predictionInput';

/**
 * The temporary tables a query's computed rows (predictions, forecasts, agents' answers) are loaded
 * into, and the join rewrite that pairs them with their inputs: DuckDB runs the rewritten query.
 */

/** What a model or an agent computes for a query: its columns, and the rows for given inputs. */
export type Computation = {
  columns: readonly string[];
  rows: (inputs: Record<string, unknown>[]) => Promise<Record<string, unknown>[]>;
};

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

/** Types for a temporary table built from JS values. */
const columnTypes = (names: string[], rows: Record<string, unknown>[]) =>
  names.map((name) => {
    const values = rows.map((r) => r[name]).filter((v) => v !== null && v !== undefined);
    const type =
      values.length && values.every((v) => typeof v === 'boolean')
        ? 'BOOLEAN'
        : values.length && values.every((v) => typeof v === 'number')
          ? values.every((v) => Number.isInteger(v))
            ? 'BIGINT'
            : 'DOUBLE'
          : 'VARCHAR';
    return { name, type };
  });

/** Rows into a typed temporary table through the appender (types from the values). */
export const loadRows = async (
  c: DuckDBConnection,
  temps: string[],
  temp: string,
  names: readonly string[],
  rows: readonly Record<string, unknown>[],
) => {
  temps.push(temp);
  const columns = columnTypes([...names], [...rows]);
  const q = quoteIdent;
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${q(temp)} (${columns.map((col) => `${q(col.name)} ${col.type}`).join(', ')})`,
  );
  const appender = await c.createAppender(temp);
  try {
    for (const row of rows) {
      for (const col of columns) {
        const v = row[col.name];
        if (v === null || v === undefined) appender.appendNull();
        else if (col.type === 'DOUBLE') appender.appendDouble(v as number);
        else if (col.type === 'BIGINT') appender.appendBigInt(BigInt(v as number));
        else if (col.type === 'BOOLEAN') appender.appendBoolean(v as boolean);
        else appender.appendVarchar(typeof v === 'string' ? v : JSON.stringify(v));
      }
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
};

/**
 * The other side of the join, materialised in DuckDB: its rows, in the order they will be paired,
 * narrowed to what the answer needs (see `inputNarrowing`).
 */
export const joinedRows = async (
  c: DuckDBConnection,
  temps: string[],
  join: AstNode,
  node: AstNode,
  narrowing: InputNarrowing = NO_NARROWING,
) => {
  const other = (join.left === node ? join.right : join.left) as AstNode;
  const { conditions, limit } = narrowing;
  const template = await parseSelect(
    c,
    `SELECT * FROM __mindledger_source${conditions.length > 1 ? ' WHERE true AND true' : ''}${
      limit === null ? '' : ` LIMIT ${limit}`
    }`,
  );
  const select = template.node as AstNode;
  select.from_table = other;
  if (conditions.length === 1) select.where_clause = structuredClone(conditions[0]);
  else if (conditions.length > 1)
    (select.where_clause as AstNode).children = conditions.map((condition) => structuredClone(condition));
  const source = await printSelect(c, template);
  temps.push('__mindledger_input');
  await c.run(`CREATE OR REPLACE TEMP TABLE __mindledger_input AS ${source}`);
  const reader = await c.runAndReadAll('SELECT * FROM __mindledger_input');
  const columns = reader.columnNames();
  // JSON rows carry 64-bit integers and decimals as text; the model, and the columns it echoes,
  // read them as the numbers they are.
  const numeric = reader
    .columnTypes()
    .map((type) => /^(BIGINT|UBIGINT|HUGEINT|UHUGEINT|DECIMAL)/.test(type.toString()));
  const valueOf = (v: unknown, i: number) => {
    if (!numeric[i] || typeof v !== 'string') return v;
    const n = Number(v);
    return Number.isFinite(n) && (Number.isSafeInteger(n) || !/^-?\d+$/.test(v)) ? n : v;
  };
  return {
    alias: String(other.alias || other.table_name || 'data'),
    rows: reader
      .getRowsJson()
      .map((r) => Object.fromEntries(columns.map((col, i) => [col, valueOf(r[i], i)]))),
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
