import type { Artifact } from './artifact';
import { categoryKey, featurize, makeFeaturizer, toNumber, type Row } from './dataset';
import { compileGbdt, compiledScores, softmaxInPlace } from './gbdt';
import { mixerOutputs } from './train';

export type PredictOptions = {
  /** Forces the interval's confidence level (0.01–0.99) instead of Lightwood's automatic choice. */
  fixed_confidence?: number;
  /** When set, the explanation string is only built if `<target>_explain` is wanted (SQL asks for what it selects). */
  wanted?: ReadonlySet<string>;
};

const LEVELS = Array.from({ length: 99 }, (_, i) => (99 - i) / 100);
const MAX_BOUND = 2 ** 62;

/** Python's json.dumps layout (", " and ": "), as MindsDB's `<target>_explain` strings are. */
const pythonJson = (o: Record<string, unknown>) =>
  `{${Object.entries(o)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v === undefined ? null : v)}`)
    .join(', ')}}`;

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * Everything needed to answer predictions from one artifact, built once per model version:
 * the featurizer, the mixer, and the conformal calibration.
 */
export const makePredictor = (artifact: Artifact) => {
  const featurizer = makeFeaturizer(artifact.encodings);
  const d = featurizer.width;
  const K = artifact.classes.length;
  const cal = artifact.calibration;
  const target = artifact.target;
  const inputColumns = artifact.columns.map((c) => c.name);
  const compiled = artifact.mixer.kind === 'gbdt' ? compileGbdt(artifact.mixer) : null;

  /** Half-width of the interval at confidence level `c`: the ⌈(n+1)c⌉-th smallest calibration score. */
  const halfWidth = (c: number) => {
    if (cal.kind !== 'regression' || cal.scores.length === 0) return 0;
    const n = cal.scores.length;
    return cal.scores[Math.min(n - 1, Math.max(0, Math.ceil((n + 1) * c) - 1))]!;
  };

  /** Lightwood's rule: the highest level whose interval is no wider than the target's std. */
  const automatic = (() => {
    if (cal.kind !== 'regression') return null;
    for (const c of LEVELS)
      if (2 * halfWidth(c) <= cal.targetStd) return { confidence: c, half: halfWidth(c) };
    return { confidence: 0.9991, half: halfWidth(0.99) * 1.5 };
  })();

  const predict = (rows: readonly Row[], options: PredictOptions = {}) => {
    const X = featurize(featurizer, rows);
    let out: Float64Array;
    if (compiled) {
      out = compiledScores(compiled, X, rows.length, d);
      if (artifact.task === 'classification')
        for (let r = 0; r < rows.length; r++) softmaxInPlace(out, r * K, K);
    } else {
      const idx = Array.from({ length: rows.length }, (_, i) => i);
      out = mixerOutputs(artifact.mixer, X, d, idx, artifact.task === 'regression' ? 0 : K);
    }
    const fixed = options.fixed_confidence;
    const skipExplain = options.wanted !== undefined && !options.wanted.has(`${target}_explain`);
    const level =
      fixed !== undefined
        ? {
            confidence: Math.min(0.99, Math.max(0.01, fixed)),
            half: halfWidth(Math.min(0.99, Math.max(0.01, fixed))),
          }
        : automatic;

    return rows.map((row, r) => {
      const result: Row = {};
      for (const c of inputColumns) result[c] = row[c] ?? null;
      const truthRaw = row[target];
      const hasTruth =
        truthRaw !== undefined &&
        truthRaw !== null &&
        !(typeof truthRaw === 'string' && truthRaw.trim() === '');
      if (artifact.task === 'regression' && cal.kind === 'regression') {
        let value = out[r]!;
        let lower = value - level!.half;
        let upper = value + level!.half;
        if (cal.positiveDomain) lower = Math.max(0, lower);
        lower = Math.max(-MAX_BOUND, lower);
        upper = Math.min(MAX_BOUND, upper);
        if (cal.isInteger) {
          value = Math.round(value);
          lower = Math.floor(lower);
          upper = Math.ceil(upper);
        }
        const truth = hasTruth ? toNumber(truthRaw) : NaN;
        const anomaly = Number.isNaN(truth) ? null : truth < lower || truth > upper;
        const truthValue = Number.isNaN(truth) ? null : truth;
        result[target] = value;
        result[`${target}_original`] = truthValue;
        result[`${target}_confidence`] = level!.confidence;
        result[`${target}_explain`] = skipExplain
          ? null
          : pythonJson({
              predicted_value: value,
              confidence: level!.confidence,
              anomaly,
              truth: truthValue,
              confidence_lower_bound: lower,
              confidence_upper_bound: upper,
            });
        result[`${target}_anomaly`] = anomaly;
        result[`${target}_min`] = lower;
        result[`${target}_max`] = upper;
      } else if (cal.kind === 'classification') {
        const p = out.subarray(r * K, r * K + K);
        let best = 0;
        for (let k = 1; k < K; k++) if (p[k]! > p[best]!) best = k;
        // p-value of each class against the calibration margins; confidence = 1 − second highest.
        const n = cal.scores.length;
        const pValues = Array.from(p, (pk, k) => {
          let other = 0;
          for (let j = 0; j < K; j++) if (j !== k) other = Math.max(other, p[j]!);
          const score = 0.5 - (pk - other) / 2;
          let atLeast = 0;
          for (let i = n - 1; i >= 0 && cal.scores[i]! >= score; i--) atLeast++;
          return (atLeast + 1) / (n + 1);
        }).sort((a, b) => b - a);
        const confidence = round4(Math.min(0.9999, Math.max(0.0001, 1 - (pValues[1] ?? 0))));
        const predicted = artifact.classes[best]!;
        const truthValue = hasTruth ? categoryKey(truthRaw) : null;
        const explain: Record<string, unknown> = {
          predicted_value: predicted,
          confidence,
          anomaly: null,
          truth: truthValue,
        };
        artifact.classes.forEach((c, k) => (explain[`probability_class_${c}`] = round4(p[k]!)));
        result[target] = predicted;
        result[`${target}_original`] = truthValue;
        result[`${target}_confidence`] = confidence;
        result[`${target}_explain`] = skipExplain ? null : pythonJson(explain);
        result[`${target}_anomaly`] = null;
      }
      result.select_data_query = row.select_data_query ?? null;
      result.when_data = row.when_data ?? null;
      result.__mindsdb_row_id = row.__mindsdb_row_id ?? null;
      return result;
    });
  };

  /** The output columns, in order, for SQL answers. */
  const outputColumns = [
    ...inputColumns,
    target,
    `${target}_original`,
    `${target}_confidence`,
    `${target}_explain`,
    `${target}_anomaly`,
    ...(artifact.task === 'regression' ? [`${target}_min`, `${target}_max`] : []),
    'select_data_query',
    'when_data',
    '__mindsdb_row_id',
  ];

  return { predict, outputColumns, artifact };
};

export type Predictor = ReturnType<typeof makePredictor>;
