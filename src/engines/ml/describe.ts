/** What a trained artifact says about itself for DESCRIBE: its columns, encoders, importances, target. */
import { isForecast, type Artifact } from './artifact';
import type { ColumnEncoding } from './dataset';
import type { TargetType } from './target';

export type ColumnDescription = {
  name: string;
  dtype: string;
  /** How the column is fed to the model, named like Lightwood's encoders where one matches. */
  encoder: string;
  /** `feature`, or for time series `order_by` / `group_by`. */
  role: string;
  /** Permutation importance relative to the most important column (0–1); null where not measured. */
  importance: number | null;
};

export type TargetDescription = {
  task: 'regression' | 'classification' | 'forecast';
  targetType: TargetType;
  targetTypeSource: 'inferred' | 'option';
  targetDtype: string;
};

const ENCODERS: Record<ColumnEncoding['kind'], string> = {
  number: 'NumericEncoder',
  onehot: 'OneHotEncoder',
  date: 'DatetimeEncoder',
  hash: 'HashedBagOfWordsEncoder',
  target: 'TargetMeanEncoder',
};

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

export const describeColumns = (a: Artifact): ColumnDescription[] => {
  if (isForecast(a)) {
    const { orderBy } = a.timeseries;
    return a.columns.map((c) => ({
      name: c.name,
      dtype: c.dtype,
      encoder: c.name === orderBy ? 'TimeSeriesOrder' : 'TimeSeriesGroup',
      role: c.name === orderBy ? 'order_by' : 'group_by',
      importance: null,
    }));
  }
  const encoders = new Map(a.encodings.map((e) => [e.column, ENCODERS[e.kind]]));
  const importance = new Map(
    (a.schemaVersion === 2 ? a.importance : []).map((i) => [i.column, round6(i.importance)]),
  );
  return a.columns.map((c) => ({
    name: c.name,
    dtype: c.dtype,
    encoder: encoders.get(c.name) ?? 'NumericEncoder',
    role: 'feature',
    importance: importance.get(c.name) ?? null,
  }));
};

/** The task and the target's type; schema 1 artifacts (before target_type) inferred it from the task. */
export const describeTarget = (a: Artifact): TargetDescription => ({
  task: a.task,
  targetType: a.schemaVersion === 2 ? a.targetType : a.task === 'regression' ? 'numeric' : 'categorical',
  targetTypeSource: a.schemaVersion === 2 ? a.targetTypeSource : 'inferred',
  targetDtype: a.targetDtype,
});
