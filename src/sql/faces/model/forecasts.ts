import type { DuckDBConnection } from '@duckdb/node-api';
import {
  replaceableConjuncts,
  nodeAt,
  parseSelect,
  printSelect,
  requiredNodeAt,
  stringsAt,
  walk,
  type AstNode,
} from '../../pipeline/ast';
import { SqlError, SqlErrorCode } from '../../errors';
import { wantedColumns } from './modelPredictions';
import type { ComputedRef } from '../face';
import type { Predictions } from '../../pipeline/plan';
import { loadRows, pairPositionally } from './predictionTables';
import type { SelectPredictOptions } from './predictOptions';

/**
 * Time-series forecasts in a query: MindsDB's `WHERE t.<order by> > LATEST` asks a forecast model for
 * the steps after the joined rows instead of a prediction per row.
 */

/** DuckDB's own TRUE, for conditions taken out of a WHERE clause. */
const trueConstant = async (c: DuckDBConnection) =>
  requiredNodeAt(requiredNodeAt(await parseSelect(c, 'SELECT 1 WHERE true'), 'node'), 'where_clause');

/** The AND-ed conditions of a query node's WHERE clause, each with a way to replace it by TRUE. */
const conjunctsOf = (node: AstNode) =>
  replaceableConjuncts(nodeAt(node, 'where_clause'), (by) => (node.where_clause = by));

/** `<column> > LATEST`: MindsDB's "forecast after the latest rows". */
const isLatest = (n: AstNode) => {
  if (n.class !== 'COMPARISON' || n.type !== 'COMPARE_GREATERTHAN') return false;
  const right = requiredNodeAt(n, 'right');
  const names = right.class === 'COLUMN_REF' ? stringsAt(right, 'column_names') : [];
  return names.length === 1 && names[0]!.toUpperCase() === 'LATEST';
};

/** Takes every `… > LATEST` out of the WHERE clause (TRUE in its place); whether there was one. */
export const takeLatest = async (c: DuckDBConnection, statement: AstNode) => {
  const node = requiredNodeAt(statement, 'node');
  const latest = conjunctsOf(node).filter((x) => isLatest(x.condition));
  if (latest.length === 0) return false;
  for (const x of latest) x.replace(await trueConstant(c));
  return true;
};

/** Whether every column a condition names is qualified by `alias` (and it names one at least). */
const onlyColumnsOf = async (condition: AstNode, alias: string) => {
  let own = 0;
  let other = 0;
  await walk(condition, (n) => {
    if (n.class !== 'COLUMN_REF') return;
    const names = stringsAt(n, 'column_names');
    if (names.length >= 2 && names[0]!.toLowerCase() === alias.toLowerCase()) own++;
    else other++;
  });
  return own > 0 && other === 0;
};

/**
 * `SELECT m.t, m.y FROM data AS t JOIN p.m AS m WHERE t.t > LATEST [AND t.g = …]`: the model's next
 * `horizon` steps after the joined rows, per group. The conditions on the data alone choose the
 * history (MindsDB filters the data it reads); each forecast row is paired with its group's last
 * history row, dated at the forecast's time and without a target value, so `t.*` reads as the
 * rows that would come next.
 */
export const forecastInto = async (
  c: DuckDBConnection,
  statement: AstNode,
  ref: ComputedRef,
  join: AstNode | undefined,
  alias: string,
  predictions: Predictions,
  temps: string[],
  predictOptions: SelectPredictOptions = {},
) => {
  const predictor = await predictions.predictor(ref.project, ref.name);
  const artifact = predictor.artifact;
  if (!predictor.forecast || artifact.task !== 'forecast')
    throw new SqlError(
      SqlErrorCode.Invalid,
      `Model ${ref.name} is not a time-series model: WHERE … > LATEST forecasts with a model made with ORDER BY … [GROUP BY …] WINDOW n HORIZON h`,
    );
  if (!join)
    throw new SqlError(
      SqlErrorCode.Invalid,
      `WHERE … > LATEST forecasts after the rows of a table: JOIN ${ref.name} with its data (SELECT … FROM data AS t JOIN ${ref.name} AS m WHERE t.${artifact.timeseries.orderBy} > LATEST)`,
    );
  const other = requiredNodeAt(join, join.left === ref.node ? 'right' : 'left');
  const otherAlias = String(other.alias || other.table_name || 'data');

  // The history: the joined table under the conditions that name only its columns.
  const pushed: AstNode[] = [];
  for (const x of conjunctsOf(requiredNodeAt(statement, 'node')))
    if (await onlyColumnsOf(x.condition, otherAlias)) {
      pushed.push(structuredClone(x.condition));
      x.replace(await trueConstant(c));
    }
  const template = await parseSelect(c, 'SELECT * FROM __mindledger_source');
  const select = requiredNodeAt(template, 'node');
  select.from_table = other;
  select.where_clause = pushed.length
    ? pushed.length === 1
      ? pushed[0]!
      : { class: 'CONJUNCTION', type: 'CONJUNCTION_AND', alias: '', query_location: 0, children: pushed }
    : null;
  temps.push('__mindledger_history');
  await c.run(`CREATE OR REPLACE TEMP TABLE __mindledger_history AS ${await printSelect(c, template)}`);
  const reader = await c.runAndReadAll('SELECT * FROM __mindledger_history');
  const historyColumns = reader.columnNames();
  // Each history row carries its index as the row id, which a forecast row keeps from its anchor.
  const history = reader.getRowsJson().map((r, i): Record<string, unknown> => ({
    ...Object.fromEntries(historyColumns.map((col, k) => [col, r[k]])),
    __mindsdb_row_id: i,
  }));

  const columns = await wantedColumns(predictor, statement, alias);
  const forecasts = predictor.forecast(history, { ...predictOptions, wanted: new Set(columns) });
  const { orderBy } = artifact.timeseries;
  const inputs = forecasts.map((f) => {
    const anchor = history[f.__mindsdb_row_id as number] ?? {};
    const row: Record<string, unknown> = {};
    for (const col of historyColumns) row[col] = anchor[col] ?? null;
    if (orderBy in row) row[orderBy] = f[orderBy];
    if (artifact.target in row) row[artifact.target] = null;
    return row;
  });
  await loadRows(c, temps, '__mindledger_input', historyColumns, inputs);
  await loadRows(c, temps, '__mindledger_prediction', columns, forecasts);
  pairPositionally(join, ref.node, otherAlias, alias);
  return printSelect(c, statement);
};
