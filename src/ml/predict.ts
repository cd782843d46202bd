import {
  isForecast,
  type Artifact,
  type ArtifactV1,
  type Calibration,
  type TabularArtifact,
} from './artifact';
import { argmaxRow, decisionScores, scaledProbabilities } from './calibrate';
import { categoryKey, featurize, makeFeaturizer, toNumber, type Row } from './dataset';
import { makeRowEncoder } from './encode';
import { compileGbdt, compiledScores, softmaxInPlace } from './gbdt';
import { mixerOutputs } from './legacy';
import { makeScorer } from './mixers';
import {
  automaticLevel,
  boundedValue,
  clampConfidence,
  conformalHalfWidth,
  hasValue,
  pythonJson,
  round4,
  type PredictOptions,
  type Predictor,
} from './answers';
import { forecastPredictor } from './timeseries';

export type { PredictOptions, Predictor } from './answers';

/** The model's raw answer for a batch: values, or probabilities and the decision's view of them. */
type Scored =
  | { kind: 'regression'; values: Float64Array }
  | { kind: 'classification'; probabilities: Float64Array; decision: Float64Array };

/** Schema 1, exactly as it predicted when it was written. */
const scoreV1 = (artifact: ArtifactV1) => {
  const featurizer = makeFeaturizer(artifact.encodings);
  const d = featurizer.width;
  const K = artifact.classes.length;
  const compiled = artifact.mixer.kind === 'gbdt' ? compileGbdt(artifact.mixer) : null;
  return (rows: readonly Row[]): Scored => {
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
    return artifact.task === 'regression'
      ? { kind: 'regression', values: out }
      : { kind: 'classification', probabilities: out, decision: out };
  };
};

const scoreV2 = (artifact: TabularArtifact) => {
  const encoder = makeRowEncoder(artifact.encodings);
  const K = artifact.classes.length;
  const scorer = makeScorer(artifact.mixer, K);
  return (rows: readonly Row[]): Scored => {
    const out = scorer(encoder.encode(rows), rows.length, encoder.width);
    if (artifact.task === 'regression') return { kind: 'regression', values: out };
    const probabilities = scaledProbabilities(out, K, artifact.probabilities!);
    return {
      kind: 'classification',
      probabilities,
      decision: decisionScores(probabilities, K, artifact.decision!),
    };
  };
};

/** How many of the ascending `sorted` are ≥ s: the same count as scanning down from the top. */
const countAtLeast = (sorted: readonly number[], s: number) => {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! >= s) hi = mid;
    else lo = mid + 1;
  }
  return sorted.length - lo;
};

/**
 * Everything needed to answer predictions from one artifact, built once per model version:
 * the encoder, the mixer, and the conformal calibration. Reads schema 1 and schema 2.
 */
export const makePredictor = (artifact: Artifact): Predictor => {
  if (isForecast(artifact)) return forecastPredictor(artifact);
  const tabular = artifact;
  const score = tabular.schemaVersion === 1 ? scoreV1(tabular) : scoreV2(tabular);
  const K = tabular.classes.length;
  const cal: Calibration = tabular.calibration;
  const target = tabular.target;
  const inputColumns = tabular.columns.map((c) => c.name);
  const classValues = tabular.schemaVersion === 1 ? 'string' : tabular.classValues;
  const typed = (key: string): string | number | boolean => {
    switch (classValues) {
      case 'string':
        return key;
      case 'number': {
        const n = toNumber(key);
        return Number.isNaN(n) ? key : n;
      }
      case 'boolean':
        return key === 'true' ? true : key === 'false' ? false : key;
    }
  };
  const automatic = cal.kind === 'regression' ? automaticLevel(cal.scores, cal.targetStd) : null;
  const keys = {
    original: `${target}_original`,
    confidence: `${target}_confidence`,
    explain: `${target}_explain`,
    anomaly: `${target}_anomaly`,
    min: `${target}_min`,
    max: `${target}_max`,
  };
  const probabilityKeys = tabular.classes.map((c) => `probability_class_${c}`);

  /** The output columns, in order, for SQL answers. */
  const outputColumns = [
    ...inputColumns,
    target,
    `${target}_original`,
    `${target}_confidence`,
    `${target}_explain`,
    `${target}_anomaly`,
    ...(tabular.task === 'regression' ? [`${target}_min`, `${target}_max`] : []),
    'select_data_query',
    'when_data',
    '__mindsdb_row_id',
  ];

  // A copy of one template keeps every answer in one hidden class, its keys in output order.
  const template: Row = Object.fromEntries(outputColumns.map((c) => [c, null]));

  const predict = (rows: readonly Row[], options: PredictOptions = {}) => {
    const scored = score(rows);
    const fixed = options.fixed_confidence;
    const skipExplain = options.wanted !== undefined && !options.wanted.has(keys.explain);
    const level =
      fixed !== undefined && cal.kind === 'regression'
        ? { confidence: clampConfidence(fixed), half: conformalHalfWidth(cal.scores, clampConfidence(fixed)) }
        : automatic;

    return rows.map((row, r) => {
      const result: Row = { ...template };
      for (const c of inputColumns) result[c] = row[c] ?? null;
      const truthRaw = row[target];
      const hasTruth = hasValue(truthRaw);
      if (scored.kind === 'regression' && cal.kind === 'regression') {
        const { value, lower, upper } = boundedValue(scored.values[r]!, level!.half, cal);
        const truth = hasTruth ? toNumber(truthRaw) : NaN;
        const anomaly = Number.isNaN(truth) ? null : truth < lower || truth > upper;
        const truthValue = Number.isNaN(truth) ? null : truth;
        result[target] = value;
        result[keys.original] = truthValue;
        result[keys.confidence] = level!.confidence;
        result[keys.explain] = skipExplain
          ? null
          : pythonJson({
              predicted_value: value,
              confidence: level!.confidence,
              anomaly,
              truth: truthValue,
              confidence_lower_bound: lower,
              confidence_upper_bound: upper,
            });
        result[keys.anomaly] = anomaly;
        result[keys.min] = lower;
        result[keys.max] = upper;
      } else if (scored.kind === 'classification' && cal.kind === 'classification') {
        const at = r * K;
        const q = scored.decision;
        const best = argmaxRow(q, at, K);
        let runnerUp = 0;
        for (let j = 0; j < K; j++) if (j !== best && q[at + j]! > runnerUp) runnerUp = q[at + j]!;
        // p-value of each class against the calibration margins; confidence = 1 − second highest.
        const n = cal.scores.length;
        let highest = -Infinity;
        let second = -Infinity;
        for (let k = 0; k < K; k++) {
          const other = k === best ? runnerUp : q[at + best]!;
          const s = 0.5 - (q[at + k]! - other) / 2;
          const pValue = (countAtLeast(cal.scores, s) + 1) / (n + 1);
          if (pValue > highest) {
            second = highest;
            highest = pValue;
          } else if (pValue > second) second = pValue;
        }
        const confidence = round4(Math.min(0.9999, Math.max(0.0001, 1 - second)));
        const predicted = typed(tabular.classes[best]!);
        const truthKey = hasTruth ? categoryKey(truthRaw) : null;
        const truthValue = truthKey === null ? null : typed(truthKey);
        result[target] = predicted;
        result[keys.original] = truthValue;
        result[keys.confidence] = confidence;
        if (skipExplain) result[keys.explain] = null;
        else {
          const explain: Record<string, unknown> = {
            predicted_value: predicted,
            confidence,
            anomaly: null,
            truth: truthValue,
          };
          for (let k = 0; k < K; k++) explain[probabilityKeys[k]!] = round4(scored.probabilities[at + k]!);
          result[keys.explain] = pythonJson(explain);
        }
        result[keys.anomaly] = null;
      }
      result.select_data_query = row.select_data_query ?? null;
      result.when_data = row.when_data ?? null;
      result.__mindsdb_row_id = row.__mindsdb_row_id ?? null;
      return result;
    });
  };

  return { predict, outputColumns, artifact };
};
