/** What every predictor answers with: options, shapes, intervals and MindsDB's explain layout. */
import type { Artifact } from './artifact';
import type { ColumnBatch, Row } from './dataset';

export type PredictOptions = {
  /** Forces the interval's confidence level (0.01–0.99) instead of Lightwood's automatic choice. */
  fixed_confidence?: number;
  /** When set, the explanation string is only built if `<target>_explain` is wanted (SQL asks for what it selects). */
  wanted?: ReadonlySet<string>;
};

export type Predictor = {
  predict: (rows: readonly Row[], options?: PredictOptions) => Row[];
  /** The output columns, in order, for SQL answers. */
  outputColumns: string[];
  /**
   * Tabular models: the answer's columns asked for, for rows held as columns (SQL reads its inputs
   * from DuckDB column by column), the trees walked on the scoring pool's threads.
   */
  predictColumns?: (
    batch: ColumnBatch,
    columns: readonly string[],
    options?: PredictOptions,
  ) => Promise<Record<string, unknown[]>>;
  /** Tabular models: what `predict` answers, the trees walked on the scoring pool's threads. */
  predictBatch?: (rows: readonly Row[], options?: PredictOptions) => Promise<Row[]>;
  artifact: Artifact;
  /** Forecast models only: the next `horizon` steps of every group after the given history. */
  forecast?: (history: readonly Row[], options?: PredictOptions) => Row[];
};

export const LEVELS = Array.from({ length: 99 }, (_, i) => (99 - i) / 100);
const MAX_BOUND = 2 ** 62;

/** Python's json.dumps layout (", " and ": "), as MindsDB's `<target>_explain` strings are. */
export const pythonJson = (o: Record<string, unknown>) => {
  // One string built in place: an answer of 10,000 rows makes 10,000 of these.
  let text = '{';
  for (const [k, v] of Object.entries(o))
    text += `${text.length > 1 ? ', ' : ''}${JSON.stringify(k)}: ${JSON.stringify(v === undefined ? null : v)}`;
  return `${text}}`;
};

/** A number as JSON writes it (NaN and the infinities: null). */
const jsonNumber = (v: number | null) => (v !== null && Number.isFinite(v) ? String(v) : 'null');

/**
 * A regression's `<target>_explain`: `pythonJson` of its six fields, written without the object
 * (a 10,000-row answer makes 10,000 of them: a tenth of the request's time went to the general one).
 */
export const regressionExplain = (
  predicted: number,
  confidence: number,
  anomaly: boolean | null,
  truth: number | null,
  lower: number,
  upper: number,
) =>
  `{"predicted_value": ${jsonNumber(predicted)}, "confidence": ${jsonNumber(confidence)}, "anomaly": ${
    anomaly === null ? 'null' : String(anomaly)
  }, "truth": ${jsonNumber(truth)}, "confidence_lower_bound": ${jsonNumber(lower)}, "confidence_upper_bound": ${jsonNumber(upper)}}`;

export const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

export const hasValue = (v: unknown) =>
  v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');

/** Half-width of a conformal interval at level `c`: the ⌈(n+1)c⌉-th smallest calibration score. */
export const conformalHalfWidth = (scores: readonly number[], c: number) => {
  if (scores.length === 0) return 0;
  const n = scores.length;
  return scores[Math.min(n - 1, Math.max(0, Math.ceil((n + 1) * c) - 1))]!;
};

export const clampConfidence = (c: number) => Math.min(0.99, Math.max(0.01, c));

/** A numeric prediction's interval, clipped and rounded as Lightwood's `_formatted` does. */
export const boundedValue = (
  predicted: number,
  half: number,
  c: { positiveDomain: boolean; isInteger: boolean },
) => {
  let value = predicted;
  let lower = value - half;
  let upper = value + half;
  if (c.positiveDomain) lower = Math.max(0, lower);
  lower = Math.max(-MAX_BOUND, lower);
  upper = Math.min(MAX_BOUND, upper);
  if (c.isInteger) {
    value = Math.round(value);
    lower = Math.floor(lower);
    upper = Math.ceil(upper);
  }
  return { value, lower, upper };
};

/** Lightwood's automatic level: the highest whose interval is no wider than the target's std. */
export const automaticLevel = (scores: readonly number[], targetStd: number) => {
  for (const c of LEVELS)
    if (2 * conformalHalfWidth(scores, c) <= targetStd)
      return { confidence: c, half: conformalHalfWidth(scores, c) };
  return { confidence: 0.9991, half: conformalHalfWidth(scores, 0.99) * 1.5 };
};

/** A predictor's output columns, in order, for SQL answers (`bounds`: the interval's min and max). */
export const predictionColumns = (inputColumns: readonly string[], target: string, bounds: boolean) => [
  ...inputColumns,
  target,
  `${target}_original`,
  `${target}_confidence`,
  `${target}_explain`,
  `${target}_anomaly`,
  ...(bounds ? [`${target}_min`, `${target}_max`] : []),
  'select_data_query',
  'when_data',
  '__mindsdb_row_id',
];
