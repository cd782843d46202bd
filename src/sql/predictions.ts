import type { DuckDBConnection } from '@duckdb/node-api';
import { parseSelect, printSelect, walk, type AstNode } from './ast';
import type { Prepared, Predictions } from './plan';
import { quoteIdent } from '../shared/quoting';

const baseTable = (table: string, alias: string): AstNode => ({
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

/** Equality conditions `col = constant` (ANDed) of a WHERE clause: the input of a one-row prediction. */
const whereEqualities = (where: AstNode | null | undefined): Record<string, unknown> => {
  const row: Record<string, unknown> = {};
  const visit = (n: AstNode | null | undefined) => {
    if (!n) return;
    if (n.class === 'CONJUNCTION' && n.type === 'CONJUNCTION_AND')
      for (const c of n.children as AstNode[]) visit(c);
    else if (n.class === 'COMPARISON' && n.type === 'COMPARE_EQUAL') {
      let [col, value] = [n.left as AstNode, n.right as AstNode];
      if (col.class !== 'COLUMN_REF') [col, value] = [value, col];
      if (col.class !== 'COLUMN_REF' || value.class !== 'CONSTANT') return;
      const names = col.column_names as string[];
      const v = value.value as { is_null: boolean; value: unknown };
      row[names[names.length - 1]!] = v.is_null ? null : v.value;
    }
  };
  visit(where);
  return row;
};

/**
 * Computes a model's predictions into a temporary table and rewrites the query onto it. Alone in
 * FROM, the model predicts one row built from the WHERE equalities (`WHERE sqft = 823 AND …`);
 * joined, it predicts every row of the other side, which is materialised first and paired with its
 * predictions position by position (a POSITIONAL JOIN of two tables in the same order).
 */
export const predictInto = async (
  c: DuckDBConnection,
  prepared: Extract<Prepared, { kind: 'model' }>,
  predictions: Predictions,
  temps: string[],
) => {
  const ref = prepared.refs[0]!;
  const predictor = await predictions.predictor(ref.project, ref.name);
  const statement = prepared.statement;
  // Only the model's columns the query uses are computed and loaded (a star wants them all).
  const modelAlias = String(ref.node.alias || ref.name);
  const wanted = new Set<string>();
  let everything = false;
  await walk(statement, (n) => {
    if (
      n.class === 'STAR' &&
      (!n.relation_name || String(n.relation_name).toLowerCase() === modelAlias.toLowerCase())
    )
      everything = true;
    if (n.class === 'COLUMN_REF') {
      const names = n.column_names as string[];
      if (names.length === 1 || names[0]!.toLowerCase() === modelAlias.toLowerCase())
        wanted.add(names[names.length - 1]!);
    }
  });
  const all = predictor.outputColumns.filter((col) => col !== '__mindsdb_row_id');
  const picked = everything ? all : all.filter((col) => wanted.has(col));
  const outputColumns = picked.length ? picked : [predictor.artifact.target];
  const predictOptions = { wanted: new Set(outputColumns) };
  // Predictions go straight into a typed temporary table through the appender.
  const load = async (temp: string, rows: Record<string, unknown>[]) => {
    temps.push(temp);
    const columns = columnTypes(outputColumns, rows);
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
  let join: AstNode | undefined;
  await walk(statement, (n) => {
    if (n.type === 'JOIN' && (n.left === ref.node || n.right === ref.node)) join = n;
  });
  if (!join) {
    const input = whereEqualities((statement.node as AstNode).where_clause as AstNode | undefined);
    await load('__mindledger_prediction', predictor.predict([input], predictOptions));
    Object.assign(ref.node, baseTable('__mindledger_prediction', modelAlias));
    return printSelect(c, statement);
  }
  const other = (join.left === ref.node ? join.right : join.left) as AstNode;
  const otherAlias = String(other.alias || other.table_name || 'data');
  const template = await parseSelect(c, 'SELECT * FROM __mindledger_source');
  (template.node as AstNode).from_table = other;
  const source = await printSelect(c, template);
  temps.push('__mindledger_input');
  await c.run(`CREATE OR REPLACE TEMP TABLE __mindledger_input AS ${source}`);
  const reader = await c.runAndReadAll('SELECT * FROM __mindledger_input');
  const columns = reader.columnNames();
  const rows = reader.getRowsJson().map((r) => Object.fromEntries(columns.map((col, i) => [col, r[i]])));
  await load('__mindledger_prediction', predictor.predict(rows, predictOptions));
  const input = baseTable('__mindledger_input', otherAlias);
  const output = baseTable('__mindledger_prediction', modelAlias);
  if (join.left === ref.node) {
    join.left = output;
    join.right = input;
  } else {
    join.left = input;
    join.right = output;
  }
  join.ref_type = 'POSITIONAL';
  join.condition = null;
  join.join_type = 'INNER';
  return printSelect(c, statement);
};
