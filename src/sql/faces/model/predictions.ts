import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import {
  conjunctsOf,
  constantValue,
  nodeAt,
  printSelect,
  requiredNodeAt,
  stringsAt,
  walk,
  type AstNode,
} from '../../pipeline/ast';
import { agentAnswers, type AgentQueryOptions } from '../agent/agentAnswers';
import { forecastInto, takeLatest } from './forecasts';
import { modelPredictions } from './modelPredictions';
import type { Prepared, Predictions } from '../../pipeline/plan';
import {
  baseTable,
  computeColumns,
  joinedColumns,
  loadColumns,
  loadRows,
  pairPositionally,
} from './predictionTables';
import { inputNarrowing } from './predictionInput';
import type { SelectPredictOptions } from './predictOptions';
import { SqlError, SqlErrorCode } from '../../errors';

/** A bound value as a model's input reads it: an integer as a number where it is exact. */
const boundValue = (value: DuckDBValue): unknown =>
  typeof value === 'bigint'
    ? Number.isSafeInteger(Number(value))
      ? Number(value)
      : value.toString()
    : value;

/**
 * Equality conditions `col = constant` or `col = <bound parameter>` (ANDed) of a WHERE clause: the
 * input of a one-row prediction. A parameter reads the value bound to it: `WHERE sqft = :s` (or `?`,
 * `$1` over the doors) predicts what `WHERE sqft = 823` predicts.
 */
const whereEqualities = (
  where: AstNode | null | undefined,
  bindings: Readonly<Record<string, DuckDBValue>>,
): Record<string, unknown> => {
  const row: Record<string, unknown> = {};
  for (const n of conjunctsOf(where)) {
    if (n.class === 'COMPARISON' && n.type === 'COMPARE_EQUAL') {
      let [col, value] = [requiredNodeAt(n, 'left'), requiredNodeAt(n, 'right')];
      if (col.class !== 'COLUMN_REF') [col, value] = [value, col];
      if (col.class !== 'COLUMN_REF') continue;
      const names = stringsAt(col, 'column_names');
      const name = names[names.length - 1]!;
      if (value.class === 'CONSTANT') row[name] = constantValue(value);
      else if (
        value.class === 'PARAMETER' &&
        typeof value.identifier === 'string' &&
        value.identifier in bindings
      )
        row[name] = boundValue(bindings[value.identifier]!);
    }
  }
  return row;
};

/** The join that pairs the computed table with another, if the query has one. */
const joinOf = async (statement: AstNode, node: AstNode) => {
  let join: AstNode | undefined;
  await walk(statement, (n) => {
    if (n.type === 'JOIN' && (n.left === node || n.right === node)) join = n;
  });
  return join;
};

/**
 * Computes a model's predictions (or an agent's answers) into a temporary table and rewrites the
 * query onto it. Alone in FROM, it answers one row built from the WHERE equalities (`WHERE sqft =
 * 823 AND …`, `WHERE question = '…'`); joined, it answers every row of the other side, which is
 * materialised first (narrowed to what the answer needs) and paired with its results position by
 * position (a POSITIONAL JOIN). A closing `USING k = v` reaches the model's predictions.
 */
export const predictInto = async (
  c: DuckDBConnection,
  prepared: Extract<Prepared, { kind: 'model' }>,
  predictions: Predictions,
  temps: string[],
  options: AgentQueryOptions,
  predictOptions: SelectPredictOptions | null = null,
  /** The values bound to the statement's parameters, by name. */
  bindings: Readonly<Record<string, DuckDBValue>> = {},
) => {
  const ref = prepared.refs[0]!;
  const statement = prepared.statement;
  const alias = String(ref.node.alias || ref.name);
  if (predictOptions && ref.kind === 'agent')
    throw new SqlError(
      SqlErrorCode.Invalid,
      `USING ${Object.keys(predictOptions).join(', ')} is a model's prediction option; ${ref.name} is an agent`,
    );
  const join = await joinOf(statement, ref.node);
  const llm = ref.kind === 'model' ? await predictions.llmModel?.(ref.project, ref.name) : undefined;
  if (llm) options.llmDeadline?.();
  if (predictOptions && (llm ? predictOptions.fixed_confidence !== undefined : predictOptions.llm))
    throw new SqlError(
      SqlErrorCode.Invalid,
      `USING ${Object.keys(llm ? { fixed_confidence: 1 } : (predictOptions.llm ?? {})).join(', ')}: ${
        llm ? `${ref.name} is an LLM model` : `an LLM model's option; ${ref.name} is a trained model`
      }`,
    );
  if (llm && (await takeLatest(c, statement)))
    throw new SqlError(
      SqlErrorCode.Invalid,
      `${ref.name} is an LLM model: it forecasts nothing (drop LATEST)`,
    );
  if (ref.kind === 'model' && (await takeLatest(c, statement)))
    return forecastInto(c, statement, ref, join, alias, predictions, temps, predictOptions ?? {});
  const compute =
    ref.kind === 'agent'
      ? agentAnswers(predictions, ref, options)
      : llm
        ? {
            columns: llm.columns,
            rows: (inputs: Record<string, unknown>[]) =>
              llm.rows(inputs, predictOptions?.llm ?? {}, options.signal),
          }
        : await modelPredictions(predictions, ref, statement, alias, predictOptions ?? {});
  if (!join) {
    const input = whereEqualities(nodeAt(requiredNodeAt(statement, 'node'), 'where_clause'), bindings);
    // As MindsDB does, the WHERE's constants stay in the row even where the model does not know
    // the column (a version trained on fewer columns): the WHERE still reads them.
    const echoed = Object.keys(input).filter((col) => !compute.columns.includes(col));
    const rows = (await compute.rows([input])).map((row) => ({
      ...Object.fromEntries(echoed.map((col) => [col, input[col]])),
      ...row,
    }));
    await loadRows(c, temps, '__mindledger_prediction', [...compute.columns, ...echoed], rows);
    Object.assign(ref.node, baseTable('__mindledger_prediction', alias));
    return printSelect(c, statement);
  }
  const input = requiredNodeAt(join, join.left === ref.node ? 'right' : 'left');
  const narrowing = await inputNarrowing(
    c,
    statement,
    join,
    input,
    String(input.alias || input.table_name || 'data'),
  );
  const other = await joinedColumns(c, temps, join, ref.node, narrowing);
  await loadColumns(
    c,
    temps,
    '__mindledger_prediction',
    compute.columns,
    await computeColumns(compute, other.columns),
  );
  pairPositionally(join, ref.node, other.alias, alias);
  return printSelect(c, statement);
};
