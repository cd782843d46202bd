import type { Predictor } from '../../../engines/ml/predict';
import { walk, type AstNode } from '../../pipeline/ast';
import type { ComputedRef } from '../face';
import type { Predictions } from '../../pipeline/plan';
import { batchOf, type Computation } from './predictionTables';
import type { SelectPredictOptions } from './predictOptions';

/** The model's columns the query uses (a star wants them all), in the model's order. */
export const wantedColumns = async (predictor: Predictor, statement: AstNode, alias: string) => {
  const wanted = new Set<string>();
  let everything = false;
  await walk(statement, (n) => {
    if (
      n.class === 'STAR' &&
      (!n.relation_name || String(n.relation_name).toLowerCase() === alias.toLowerCase())
    )
      everything = true;
    if (n.class === 'COLUMN_REF') {
      const names = n.column_names as string[];
      if (names.length === 1 || names[0]!.toLowerCase() === alias.toLowerCase())
        wanted.add(names[names.length - 1]!);
    }
  });
  const all = predictor.outputColumns.filter((col) => col !== '__mindsdb_row_id');
  const picked = everything ? all : all.filter((col) => wanted.has(col));
  return picked.length ? picked : [predictor.artifact.target];
};

/** Only the model's columns the query uses are computed and loaded. */
export const modelPredictions = async (
  predictions: Predictions,
  ref: ComputedRef,
  statement: AstNode,
  alias: string,
  predictOptions: SelectPredictOptions = {},
): Promise<Computation> => {
  const predictor = await predictions.predictor(ref.project, ref.name);
  const columns = await wantedColumns(predictor, statement, alias);
  const { predictColumns } = predictor;
  return {
    columns,
    rows: async (inputs) => predictor.predict(inputs, { ...predictOptions, wanted: new Set(columns) }),
    columnsFor: predictColumns
      ? async (inputs) => ({
          length: inputs.length,
          values: await predictColumns(batchOf(inputs), columns, predictOptions),
        })
      : undefined,
  };
};
