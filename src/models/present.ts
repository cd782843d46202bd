import { invalid } from '../shared/errors';
import { DESCRIBE_ATTRIBUTES } from '../shared/modelAttributes';
import { pyRepr } from '../shared/pyrepr';
import { toMindsDbTimestamp } from '../shared/time';
import { VERSION } from '../shared/version';
import { PARTIAL_INPUTS_DESCRIPTION } from '../engines/ml/partial';
import type { ModelRow } from './projection';

/** MindsDB's reduced model dict (GET /models, GET /models/{m}); options were masked by the projection. */
export const presentModel = (r: ModelRow) => {
  const options = JSON.parse(r.TRAINING_OPTIONS) as { target: string; using: Record<string, unknown> };
  return {
    id: Number(r.ID),
    name: r.NAME,
    version: r.VERSION,
    is_active: r.ACTIVE,
    predict: r.PREDICT,
    status: r.STATUS,
    problem_definition: options,
    current_phase: r.STATUS,
    accuracy: r.ACCURACY,
    data_source: r.SOURCE_DATABASE,
    update: r.UPDATE_STATUS,
    active: r.ACTIVE,
    mindsdb_version: VERSION,
    error: r.ERROR,
    created_at: toMindsDbTimestamp(r.CREATED_AT).slice(0, 19),
    fetch_data_query: r.SELECT_DATA_QUERY,
    training_time: r.TRAINING_TIME,
    engine: r.ENGINE,
    engine_name: r.ENGINE,
    tag: r.TAG,
    // MindsDB's predictor record: training_phase_current of training_phase_total, by name.
    training_phase_current: r.CURRENT_TRAINING_PHASE,
    training_phase_total: r.TOTAL_TRAINING_PHASES,
    training_phase_name: r.TRAINING_PHASE_NAME,
    /** Percentage of the whole training done (coarse: about twenty steps). */
    progress: r.TRAINING_PROGRESS,
    training_rows: r.TRAINING_ROWS === null ? null : Number(r.TRAINING_ROWS),
    target_type: r.TARGET_TYPE,
  };
};
export type ModelView = ReturnType<typeof presentModel>;

/** The one-row table CREATE MODEL / RETRAIN answer in SQL (MindsDB's columns). */
export const modelTable = (v: ModelView, project: string) => ({
  column_names: [
    'NAME',
    'ENGINE',
    'PROJECT',
    'ACTIVE',
    'VERSION',
    'STATUS',
    'ACCURACY',
    'PREDICT',
    'UPDATE_STATUS',
    'MINDSDB_VERSION',
    'ERROR',
    'SELECT_DATA_QUERY',
    'TRAINING_OPTIONS',
    'TAG',
  ],
  data: [
    [
      v.name,
      v.engine,
      project,
      v.active,
      v.version,
      v.status,
      v.accuracy,
      v.predict,
      v.update,
      v.mindsdb_version,
      v.error,
      v.fetch_data_query,
      JSON.stringify(v.problem_definition),
      v.tag,
    ],
  ],
});

/** MindsDB's answer to a REST CREATE (problem_definition as a Python repr). */
export const createdBody = (v: ModelView) => ({
  name: v.name,
  accuracy: v.accuracy,
  active: v.active,
  version: v.version,
  status: v.status,
  predict: v.predict,
  mindsdb_version: v.mindsdb_version,
  error: v.error,
  fetch_data_query: v.fetch_data_query,
  problem_definition: pyRepr(v.problem_definition),
});

type DescribedColumn = {
  name: string;
  dtype: string;
  encoder?: string;
  role?: string;
  importance?: number | null;
};

/** How the target is fed back (Lightwood's names): numbers, classes, or lags of a series. */
const targetEncoder = (task: string | null) =>
  task === 'classification'
    ? 'OneHotEncoder'
    : task === 'forecast'
      ? 'TimeSeriesLags'
      : task === 'regression'
        ? 'NumericEncoder'
        : null;

/** How a table model answers rows lacking inputs (null for forecasters and LLM models). */
const missingInputs = (task: string | null) =>
  task === 'regression' || task === 'classification' ? PARTIAL_INPUTS_DESCRIPTION : null;

/** `DESCRIBE`: the attributes MindsDB offers, or one of them (`info`, `features`, `model`, `progress`). */
export const describeModel = (row: ModelRow, attribute?: string): Record<string, unknown>[] => {
  const columns = row.COLUMNS ? (JSON.parse(row.COLUMNS) as DescribedColumn[]) : [];
  const rows = row.TRAINING_ROWS === null ? null : Number(row.TRAINING_ROWS);
  switch (attribute?.toLowerCase()) {
    case undefined:
      // MindsDB lists these three; `progress` answers too (as MindsDB's does) without being listed.
      return ['info', 'features', 'model'].map((tables) => ({ tables }));
    case 'info':
      return [
        {
          accuracies: { [row.METRIC ?? 'r2']: row.ACCURACY },
          column_importances: Object.fromEntries(
            columns.flatMap((c) => (typeof c.importance === 'number' ? [[c.name, c.importance]] : [])),
          ),
          outputs: [row.PREDICT],
          inputs: columns.map((c) => c.name),
          status: row.STATUS,
          target_type: row.TARGET_TYPE,
          target_type_source: row.TARGET_TYPE_SOURCE,
          task: row.TASK,
          training_time: row.TRAINING_TIME,
          training_rows: rows,
          missing_inputs: missingInputs(row.TASK),
        },
      ];
    case 'features':
      return [
        ...columns.map((c) => ({
          column: c.name,
          type: c.dtype,
          encoder: c.encoder ?? null,
          role: c.role ?? 'feature',
          importance: c.importance ?? null,
        })),
        {
          column: row.PREDICT,
          type: row.TARGET_DTYPE ?? row.TARGET_TYPE,
          encoder: targetEncoder(row.TASK),
          role: 'target',
          importance: null,
        },
      ];
    case 'model':
      return [
        {
          name:
            row.TASK === 'llm'
              ? `an LLM model: each row's prompt answered by its engine (${row.ENGINE})`
              : row.TASK === 'forecast'
                ? 'one model per horizon step over lag features: best of gbdt, linear and last value'
                : 'best of gbdt, linear and baseline (see accuracy)',
          performance: row.ACCURACY,
          accuracy: row.ACCURACY,
          training_time: row.TRAINING_TIME,
          training_rows: rows,
          selected: true,
          accuracy_functions: row.METRIC,
          missing_inputs: missingInputs(row.TASK),
        },
      ];
    case 'progress':
      return [
        {
          current: row.CURRENT_TRAINING_PHASE,
          total: row.TOTAL_TRAINING_PHASES,
          name: row.TRAINING_PHASE_NAME,
          percent: row.TRAINING_PROGRESS,
          rows,
          status: row.STATUS,
        },
      ];
    default:
      throw invalid(
        `Unknown attribute ${attribute}: use ${DESCRIBE_ATTRIBUTES.join(', ')}`,
        'ML handler unsupported',
      );
  }
};
