import {
  isForecast,
  type Artifact,
  type ArtifactV1,
  type Calibration,
  type TabularArtifact,
} from './artifact';
import { argmaxRow, decisionScores, scaledProbabilities } from './calibrate';
import {
  batchOfRows,
  categoryKey,
  featurize,
  makeFeaturizer,
  toNumber,
  type ColumnBatch,
  type Row,
} from './dataset';
import { cellKey, makeBatchEncoder } from './encode';
import { explainPartial, groupOf, makePartial, type PartialModel } from './partial';
import { compileGbdt, compiledScores, softmaxRow, type CompiledGbdt } from './gbdt';
import { mixerOutputs } from './legacy';
import { gbdtOutputs, makeScorer } from './mixers';
import type { ScoringPool } from './scoringPool';
import {
  automaticLevel,
  LEVELS,
  boundedValue,
  clampConfidence,
  conformalHalfWidth,
  hasValue,
  predictionColumns,
  pythonJson,
  regressionExplain,
  round4,
  type PredictOptions,
  type Predictor,
} from './answers';
import { forecastPredictor } from './timeseries';

export type { PredictOptions, Predictor } from './answers';

/** The model's raw answer for a batch: values, or probabilities and the decision's view of them. */
type Scored = (
  | { kind: 'regression'; values: Float64Array }
  | { kind: 'classification'; probabilities: Float64Array; decision: Float64Array }
) & {
  /** Each cell's status (partial.ts: known, missing, unseen, out of range), null when all known. */
  status?: Uint8Array | null;
  /** Regression with a partial model: each row's scale σ (computed when first asked). */
  scales?: (() => Float64Array) | null;
};

/**
 * A batch on its way to its scores: its features, the tree ensemble to walk (null for other
 * mixers), and what the ensemble's raw scores (null: none) become. The walk is the costly part,
 * done on this thread or spread over a scoring pool.
 */
type Scoring = {
  X: Float64Array;
  n: number;
  d: number;
  ensemble: CompiledGbdt | null;
  finish: (raw: Float64Array | null) => Scored;
};

/** Schema 1, exactly as it predicted when it was written. */
const scoreV1 = (artifact: ArtifactV1) => {
  const featurizer = makeFeaturizer(artifact.encodings);
  const d = featurizer.width;
  const K = artifact.classes.length;
  const ensemble = artifact.mixer.kind === 'gbdt' ? compileGbdt(artifact.mixer) : null;
  return (batch: ColumnBatch): Scoring => {
    const X = featurize(featurizer, batch);
    const n = batch.length;
    const finish = (raw: Float64Array | null): Scored => {
      let out: Float64Array;
      if (raw) {
        out = raw;
        if (artifact.task === 'classification') for (let r = 0; r < n; r++) softmaxRow(out, out, r * K, K);
      } else {
        const idx = Array.from({ length: n }, (_, i) => i);
        out = mixerOutputs(artifact.mixer, X, d, idx, artifact.task === 'regression' ? 0 : K);
      }
      return artifact.task === 'regression'
        ? { kind: 'regression', values: out }
        : { kind: 'classification', probabilities: out, decision: out };
    };
    return { X, n, d, ensemble, finish };
  };
};

const scoreV2 = (artifact: TabularArtifact) => {
  const encoder = makeBatchEncoder(artifact.encodings);
  const K = artifact.classes.length;
  const { mixer } = artifact;
  const ensemble = mixer.kind === 'gbdt' ? compileGbdt(mixer) : null;
  const scorer = mixer.kind === 'gbdt' ? null : makeScorer(mixer, K);
  const partial = artifact.partial ? makePartial(artifact.partial, artifact.encodings, encoder.width) : null;
  return (batch: ColumnBatch): Scoring => {
    const X = encoder.encode(batch);
    const n = batch.length;
    const d = encoder.width;
    // A one-hot cell with no class: missing when the input is, unseen otherwise.
    const given = (c: number, r: number) =>
      cellKey(batch.column(artifact.encodings[c]!.column)?.[r]) !== null;
    const status = partial ? partial.statusOf(X, n, given) : null;
    const expansion = status ? partial!.expand(X, n, status) : null;
    const Xs = expansion ? expansion.X : X;
    const ns = expansion ? expansion.n : n;
    const finish = (raw: Float64Array | null): Scored => {
      const out =
        raw && mixer.kind === 'gbdt'
          ? gbdtOutputs(raw, ns, K === 0 ? 1 : K, mixer.outputs)
          : scorer!(Xs, ns, d);
      if (artifact.task === 'regression') {
        const folded = expansion ? partial!.fold(expansion, out) : null;
        let memo: Float64Array | null = null;
        return {
          kind: 'regression',
          values: folded ? folded.mean : out,
          status,
          scales: partial
            ? () => (memo ??= partial.scales(X, n, status, folded ? folded.spread : null))
            : null,
        };
      }
      const scaled = scaledProbabilities(out, K, artifact.probabilities!);
      const probabilities = expansion ? partial!.foldProbabilities(expansion, scaled, K) : scaled;
      return {
        kind: 'classification',
        probabilities,
        decision: decisionScores(probabilities, K, artifact.decision!),
        status,
      };
    };
    return { X: Xs, n: ns, d, ensemble, finish };
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

type RegressionCalibration = Extract<Calibration, { kind: 'regression' }>;
type ClassificationCalibration = Extract<Calibration, { kind: 'classification' }>;
type Level = { confidence: number; half: number };

/** The answer's columns a batch fills, each null when it was not asked for. */
type AnswerSlots = {
  predicted: unknown[] | null;
  original: unknown[] | null;
  confidences: unknown[] | null;
  explains: unknown[] | null;
  anomalies: unknown[] | null;
};

/** A class key as the answer gives it: typed as the training target's values were. */
const classTyper =
  (classValues: TabularArtifact['classValues']) =>
  (key: string): string | number | boolean => {
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

/** A regression model's intervals, built once per model. */
type RegressionIntervals = {
  cal: RegressionCalibration;
  automatic: Level;
  partial: PartialModel | undefined;
  /** Conformal scores normalised by each row's σ (models trained since issue 59). */
  normalised: number[][] | null;
  /** Each group's normalised half-width at each level, highest level first (as LEVELS). */
  quantiles: number[][];
};

const regressionIntervals = (
  cal: RegressionCalibration,
  partial: PartialModel | undefined,
): RegressionIntervals => {
  const normalised = partial?.scores ?? null;
  return {
    cal,
    automatic: automaticLevel(cal.scores, cal.targetStd),
    partial,
    normalised,
    quantiles: normalised ? normalised.map((group) => LEVELS.map((c) => conformalHalfWidth(group, c))) : [],
  };
};

/** Lightwood's automatic rule for one row: the highest level whose interval fits in the target's std. */
const rowLevel = (quantiles: readonly number[][], sigma: number, targetStd: number, group: number): Level => {
  const q = quantiles[group]!;
  for (let j = 0; j < LEVELS.length; j++)
    if (2 * q[j]! * sigma <= targetStd) return { confidence: LEVELS[j]!, half: q[j]! * sigma };
  return { confidence: 0.9991, half: q[0]! * sigma * 1.5 };
};

/** A regression's values, intervals and verdicts, row by row; `column` makes the bounds' columns. */
const answerRegression = (
  slots: AnswerSlots,
  column: (name: string) => unknown[] | null,
  keys: { min: string; max: string },
  scored: Extract<Scored, { kind: 'regression' }>,
  truths: ArrayLike<unknown> | undefined,
  n: number,
  intervals: RegressionIntervals,
  fixed: number | undefined,
) => {
  const { cal, normalised, partial } = intervals;
  const { predicted, original, confidences, explains, anomalies } = slots;
  const level =
    fixed !== undefined
      ? { confidence: clampConfidence(fixed), half: conformalHalfWidth(cal.scores, clampConfidence(fixed)) }
      : intervals.automatic;
  const lowers = column(keys.min);
  const uppers = column(keys.max);
  // A partial model scales each row's interval by its σ: computed only when an interval is asked.
  const perRow =
    normalised && scored.scales && (confidences || explains || anomalies || lowers || uppers)
      ? { sigma: scored.scales(), scores: normalised }
      : null;
  const fixedQuantiles =
    perRow && fixed !== undefined
      ? perRow.scores.map((group) => conformalHalfWidth(group, clampConfidence(fixed)))
      : [];
  for (let r = 0; r < n; r++) {
    let { confidence, half } = level;
    if (perRow) {
      const sigma = perRow.sigma[r]!;
      const group = groupOf(scored.status ?? null, r, partial!.columns);
      if (fixed !== undefined) half = fixedQuantiles[group]! * sigma;
      else ({ confidence, half } = rowLevel(intervals.quantiles, sigma, cal.targetStd, group));
    }
    const { value, lower, upper } = boundedValue(scored.values[r]!, half, cal);
    const truthRaw = truths?.[r];
    const truth = hasValue(truthRaw) ? toNumber(truthRaw) : NaN;
    const anomaly = Number.isNaN(truth) ? null : truth < lower || truth > upper;
    const truthValue = Number.isNaN(truth) ? null : truth;
    if (predicted) predicted[r] = value;
    if (original) original[r] = truthValue;
    if (confidences) confidences[r] = confidence;
    if (explains)
      explains[r] = explainPartial(
        partial,
        regressionExplain(value, confidence, anomaly, truthValue, lower, upper),
        scored.status,
        r,
      );
    if (anomalies) anomalies[r] = anomaly;
    if (lowers) lowers[r] = lower;
    if (uppers) uppers[r] = upper;
  }
};

/** The best class's confidence: p-values of each class against the calibration margins, 1 − the second highest. */
const classConfidence = (q: Float64Array, at: number, K: number, best: number, scores: readonly number[]) => {
  let runnerUp = 0;
  for (let j = 0; j < K; j++) if (j !== best && q[at + j]! > runnerUp) runnerUp = q[at + j]!;
  let highest = -Infinity;
  let second = -Infinity;
  for (let k = 0; k < K; k++) {
    const other = k === best ? runnerUp : q[at + best]!;
    const s = 0.5 - (q[at + k]! - other) / 2;
    const pValue = (countAtLeast(scores, s) + 1) / (scores.length + 1);
    if (pValue > highest) {
      second = highest;
      highest = pValue;
    } else if (pValue > second) second = pValue;
  }
  return round4(Math.min(0.9999, Math.max(0.0001, 1 - second)));
};

/** What a classifier's answers name and type: its classes, their probability keys, its partial model. */
type ClassAnswers = {
  cal: ClassificationCalibration;
  classes: readonly string[];
  probabilityKeys: readonly string[];
  typed: (key: string) => string | number | boolean;
  partial: PartialModel | undefined;
};

/** A classification's classes, confidences and explanations, row by row. */
const answerClassification = (
  slots: AnswerSlots,
  scored: Extract<Scored, { kind: 'classification' }>,
  truths: ArrayLike<unknown> | undefined,
  n: number,
  c: ClassAnswers,
) => {
  const { predicted, original, confidences, explains, anomalies } = slots;
  const K = c.classes.length;
  const q = scored.decision;
  for (let r = 0; r < n; r++) {
    const at = r * K;
    const best = argmaxRow(q, at, K);
    const confidence = classConfidence(q, at, K, best, c.cal.scores);
    const value = c.typed(c.classes[best]!);
    const truthRaw = truths?.[r];
    const truthKey = hasValue(truthRaw) ? categoryKey(truthRaw) : null;
    const truthValue = truthKey === null ? null : c.typed(truthKey);
    if (predicted) predicted[r] = value;
    if (original) original[r] = truthValue;
    if (confidences) confidences[r] = confidence;
    if (explains) {
      const explain: Record<string, unknown> = {
        predicted_value: value,
        confidence,
        anomaly: null,
        truth: truthValue,
      };
      for (let k = 0; k < K; k++) explain[c.probabilityKeys[k]!] = round4(scored.probabilities[at + k]!);
      explains[r] = explainPartial(c.partial, pythonJson(explain), scored.status, r);
    }
    if (anomalies) anomalies[r] = null;
  }
};

/**
 * The answer's columns for a batch, only those asked for (`columns`, any order): each an array
 * with one value per row. The explanation string, the costliest, is built only when asked for.
 */
const columnAnswerer = (tabular: TabularArtifact | ArtifactV1) => {
  const cal: Calibration = tabular.calibration;
  const target = tabular.target;
  const inputColumns = tabular.columns.map((c) => c.name);
  const partial = tabular.schemaVersion === 2 ? tabular.partial : undefined;
  const intervals = cal.kind === 'regression' ? regressionIntervals(cal, partial) : null;
  const classAnswers: ClassAnswers | null =
    cal.kind === 'classification'
      ? {
          cal,
          classes: tabular.classes,
          probabilityKeys: tabular.classes.map((c) => `probability_class_${c}`),
          typed: classTyper(tabular.schemaVersion === 1 ? 'string' : tabular.classValues),
          partial,
        }
      : null;
  const bounds = { min: `${target}_min`, max: `${target}_max` };
  return (
    batch: ColumnBatch,
    scored: Scored,
    columns: readonly string[],
    options: PredictOptions,
  ): Record<string, unknown[]> => {
    const n = batch.length;
    const asked = new Set(columns);
    const out: Record<string, unknown[]> = {};
    const column = (name: string) =>
      asked.has(name) ? (out[name] = new Array<unknown>(n).fill(null)) : null;
    const echo = (name: string) => {
      if (!asked.has(name)) return;
      const values = batch.column(name);
      out[name] = values ? Array.from(values, (v) => v ?? null) : new Array<unknown>(n).fill(null);
    };
    for (const c of inputColumns) echo(c);
    echo('select_data_query');
    echo('when_data');
    echo('__mindsdb_row_id');
    const truths = batch.column(target);
    const slots: AnswerSlots = {
      predicted: column(target),
      original: column(`${target}_original`),
      confidences: column(`${target}_confidence`),
      explains: column(`${target}_explain`),
      anomalies: column(`${target}_anomaly`),
    };
    if (scored.kind === 'regression' && intervals)
      answerRegression(slots, column, bounds, scored, truths, n, intervals, options.fixed_confidence);
    else if (scored.kind === 'classification' && classAnswers)
      answerClassification(slots, scored, truths, n, classAnswers);
    return out;
  };
};

/** Answer rows, every output column in order (absent ones null), each a copy of `template`. */
const rowsOf = (
  outputColumns: readonly string[],
  template: Row,
  count: number,
  columns: Record<string, unknown[]>,
) => {
  const present = outputColumns.filter((c) => columns[c] !== undefined);
  const values = present.map((c) => columns[c]!);
  const answers = new Array<Row>(count);
  for (let r = 0; r < count; r++) {
    const result: Row = { ...template };
    for (let j = 0; j < present.length; j++) result[present[j]!] = values[j]![r];
    answers[r] = result;
  }
  return answers;
};

/**
 * Everything needed to answer predictions from one artifact, built once per model version:
 * the encoder, the mixer, and the conformal calibration. Reads schema 1 and schema 2.
 */
export const makePredictor = (artifact: Artifact, pool?: ScoringPool): Predictor => {
  if (isForecast(artifact)) return forecastPredictor(artifact);
  const tabular = artifact;
  const prepare = tabular.schemaVersion === 1 ? scoreV1(tabular) : scoreV2(tabular);
  /** Scores on this thread. */
  const score = (batch: ColumnBatch) => {
    const s = prepare(batch);
    return s.finish(s.ensemble ? compiledScores(s.ensemble, s.X, s.n, s.d) : null);
  };
  /** Scores with the ensemble's walk spread over the pool's threads (the same values). */
  const scoreInPool = async (batch: ColumnBatch) => {
    if (!pool) return score(batch);
    const s = prepare(batch);
    return s.finish(s.ensemble ? await pool.scores(s.ensemble, s.X, s.n, s.d) : null);
  };
  const answerColumns = columnAnswerer(tabular);
  const explainKey = `${tabular.target}_explain`;
  const outputColumns = predictionColumns(
    tabular.columns.map((c) => c.name),
    tabular.target,
    tabular.task === 'regression',
  );
  // A copy of one template keeps every answer in one hidden class, its keys in output order.
  const template: Row = Object.fromEntries(outputColumns.map((c) => [c, null]));

  /** The output columns a row answer holds: all, the explanation only when wanted. */
  const rowColumns = (options: PredictOptions) =>
    options.wanted !== undefined && !options.wanted.has(explainKey)
      ? outputColumns.filter((c) => c !== explainKey)
      : outputColumns;

  const answerRows = (count: number, columns: Record<string, unknown[]>) =>
    rowsOf(outputColumns, template, count, columns);

  /** Answer rows, scored on this thread; `wanted` without the explanation leaves it null. */
  const predict = (rows: readonly Row[], options: PredictOptions = {}) => {
    const batch = batchOfRows(rows);
    return answerRows(rows.length, answerColumns(batch, score(batch), rowColumns(options), options));
  };

  const predictColumns = async (
    batch: ColumnBatch,
    columns: readonly string[],
    options: PredictOptions = {},
  ) => answerColumns(batch, await scoreInPool(batch), columns, options);

  const predictBatch = async (rows: readonly Row[], options: PredictOptions = {}) =>
    answerRows(rows.length, await predictColumns(batchOfRows(rows), rowColumns(options), options));

  return { predict, predictBatch, predictColumns, outputColumns, artifact };
};
