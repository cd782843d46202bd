import { invalid } from '../shared/errors';
import { pyRepr } from '../shared/pyrepr';
import { toMindsDbTimestamp } from '../shared/time';
import { VERSION } from '../shared/version';
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

/** `DESCRIBE`: the attributes MindsDB offers, or one of them (`info`, `features`, `model`). */
export const describeModel = (row: ModelRow, attribute?: string): Record<string, unknown>[] => {
  const columns = row.COLUMNS ? (JSON.parse(row.COLUMNS) as { name: string; dtype: string }[]) : [];
  switch (attribute) {
    case undefined:
      return [{ tables: 'info' }, { tables: 'features' }, { tables: 'model' }];
    case 'info':
      return [
        {
          accuracies: { [row.METRIC ?? 'r2']: row.ACCURACY },
          outputs: [row.PREDICT],
          inputs: columns.map((c) => c.name),
          status: row.STATUS,
        },
      ];
    case 'features':
      return [
        ...columns.map((c) => ({ column: c.name, type: c.dtype, role: 'feature' })),
        { column: row.PREDICT, type: 'target', role: 'target' },
      ];
    case 'model':
      return [
        {
          name: 'best of gbdt, linear and baseline (see accuracy)',
          accuracy: row.ACCURACY,
          training_time: row.TRAINING_TIME,
          selected: true,
        },
      ];
    default:
      throw invalid(`Unknown attribute ${attribute}: use info, features or model`, 'ML handler unsupported');
  }
};
