import type { ArtifactV2, Calibration, FeatureImportance, Mixer, TabularArtifact } from './artifact';
import {
  MAX_FIT_ROWS,
  MAX_STOP_ROWS,
  prepareBoosting,
  sampleRows,
  trainBoostedScored,
  type Objective,
  type ScoredBoosting,
} from './boost';
import {
  argmaxRow,
  chooseDecision,
  decisionAccuracy,
  decisionScores,
  fitScaling,
  marginScores,
  scaledProbabilities,
  thinScores,
  type DecisionRule,
  type ProbabilityScaling,
} from './calibrate';
import { inferColumnType, keysOf, numbersOf } from './columnTypes';
import { featureNames, toNumber, type ColumnEncoding, type DType } from './dataset';
import { encodeColumns, planEncodings } from './encode';
import { FOREST_OPTIONS, MAX_FOREST_ROWS, trainForest } from './forest';
import { permutationImportance } from './importance';
import { trainLinear } from './linear';
import { gbdtOutputs, makeScorer, rowMajor, type Scorer } from './mixers';
import { balancedAccuracy, r2 } from './metrics';
import type { ParsedTrainOptions } from './options';
import {
  difficultyRows,
  groupOf,
  makePartial,
  MIN_GROUP_SCORES,
  MASKED_SHARES,
  MAX_MASKED_CALIBRATION,
  MAX_WHOLE_CALIBRATION,
  MISSING,
  planPartial,
  randomMask,
  withDifficulty,
  type PartialModel,
} from './partial';
import { progressReporter, type OnProgress, type ProgressReporter } from './progress';
import { shuffledOrder } from './random';
import { TrainingError } from './trainingError';
import { planTargetOrFail, type TargetPlan } from './target';
import {
  asColumnar,
  isNumericColumn,
  rowCount,
  type ColumnarData,
  type ColumnValues,
  type TrainingData,
} from './table';
import { trainForecaster } from './timeseries';

const MAX_CLASSES = 100;
/** Conformal scores and the held-out accuracy come from at most this many calibration rows. */
const MAX_CALIBRATION_ROWS = 20_000;
/** Permutation importance reads at most this many calibration rows. */
const IMPORTANCE_ROWS = 2000;

/**
 * `rows` (distinct indices below `n`) in ascending order, by marking them and reading the marks in
 * order: what sorting them gives, without a sort (800,000 train rows took 50–60 ms to sort).
 */
const ascendingRows = (rows: Int32Array, n: number) => {
  const marked = new Uint8Array(n);
  for (let k = 0; k < rows.length; k++) marked[rows[k]!] = 1;
  const out = new Int32Array(rows.length);
  let at = 0;
  for (let i = 0; i < n; i++) if (marked[i]) out[at++] = i;
  return out;
};

/** Seeded 80/10/10 split of `n` rows into train, dev (early stopping, selection) and calibration. */
export const splitRows = (n: number, seed: number) => {
  const order = shuffledOrder(n, seed);
  const nDev = Math.max(1, Math.floor(n * 0.1));
  const nCal = Math.max(1, Math.floor(n * 0.1));
  // Train and dev in row order (memory is walked forwards); calibration keeps the shuffled order,
  // so its first rows are a random sample (permutation importance reads them).
  return {
    train: ascendingRows(order.subarray(0, n - nDev - nCal), n),
    dev: ascendingRows(order.subarray(n - nDev - nCal, n - nCal), n),
    cal: order.slice(n - nCal),
  };
};

/** The target's classes, most frequent first (ties by value), and how answers type them. */
const classesOf = (
  keys: readonly (string | null)[],
  values: ColumnarData['data'][number],
  target: string,
) => {
  const counts = new Map<string, number>();
  for (const k of keys) if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1);
  const classes = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k]) => k);
  if (classes.length > MAX_CLASSES)
    throw new TrainingError(
      `${target} has ${classes.length} distinct values: at most ${MAX_CLASSES} classes are supported`,
    );
  if (classes.length < 2)
    throw new TrainingError(`${target} has a single value: there is nothing to predict`);
  let booleans = !isNumericColumn(values);
  for (let i = 0; i < values.length && booleans; i++) {
    const v = values[i];
    if (!(typeof v === 'boolean' || v === null || v === undefined)) booleans = false;
  }
  // Numbers only where the text survives the round trip ("02134" stays a string).
  const numbers = classes.every((c) => String(toNumber(c)) === c);
  const classValues: TabularArtifact['classValues'] = booleans ? 'boolean' : numbers ? 'number' : 'string';
  return { classes, classValues };
};

type Candidate = {
  name: string;
  mixer: Mixer;
  score: number;
  probabilities: ProbabilityScaling | null;
  decision: DecisionRule | null;
};

/**
 * `trainModel` (./trainModel.ts) on options already read by `parseTrainOptions`: the training
 * worker's entry. This module and all it imports load no zod, which was 157 of a worker's 192 ms
 * to start (built) and more under tsx: options are read on the main thread, which has zod loaded.
 */
export const trainParsed = (
  data: TrainingData,
  target: string,
  o: ParsedTrainOptions,
  onProgress?: OnProgress,
): ArtifactV2 => {
  const report = progressReporter(onProgress);
  report('reading', 0);
  const table = asColumnar(data);
  report('reading', 1);
  if (o.orderBy !== undefined) return trainForecaster(table, target, o, report);
  return trainTabular(table, target, o, report);
};

/** The mean of `y` over the train rows. */
const trainMean = (y: Float64Array, train: Int32Array) => {
  let mean = 0;
  for (const i of train) mean += y[i]!;
  return mean / train.length;
};

/** The target column's values and how it is predicted (regression or classes). */
const readTarget = (table: ColumnarData, target: string, o: ParsedTrainOptions) => {
  if (rowCount(table) === 0) throw new TrainingError('The training query returned no rows');
  const targetIndex = table.columns.indexOf(target);
  if (targetIndex < 0)
    throw new TrainingError(
      `The target column ${target} is not among the query's columns: ${table.columns.join(', ')}`,
    );
  const targetValues = table.data[targetIndex]!;
  const plan: TargetPlan = planTargetOrFail(targetValues, target, o.target_type ?? o.targetType);
  return { targetValues, plan, regression: plan.task === 'regression' };
};

/**
 * The rows whose target is usable (missing or unreadable ones teach nothing; null: all are) and
 * their targets: the value, or the index of the class (classes most frequent first).
 */
const usableTargets = (
  table: ColumnarData,
  targetValues: ColumnValues,
  target: string,
  regression: boolean,
) => {
  const numbers = regression ? numbersOf(targetValues) : null;
  const keys = regression ? null : keysOf(targetValues);
  const total = rowCount(table);
  const usableList = new Int32Array(total);
  let nUsable = 0;
  for (let i = 0; i < total; i++)
    if (regression ? numbers![i] === numbers![i] : keys![i] !== null) usableList[nUsable++] = i;
  if (nUsable < 10)
    throw new TrainingError(`Only ${nUsable} rows have a usable ${target}: at least 10 are needed`);
  const usable = nUsable === total ? null : usableList.slice(0, nUsable);
  const at = (k: number) => (usable ? usable[k]! : k);
  let classes: string[] = [];
  let classValues: TabularArtifact['classValues'] = 'string';
  const y = new Float64Array(nUsable);
  if (regression) for (let k = 0; k < nUsable; k++) y[k] = numbers![at(k)]!;
  else {
    ({ classes, classValues } = classesOf(keys!, targetValues, target));
    const index = new Map(classes.map((c, j) => [c, j]));
    for (let k = 0; k < nUsable; k++) y[k] = index.get(keys![at(k)]!)!;
  }
  return { usable, y, classes, classValues };
};

/** The input columns whose type can be told, in the table's order. */
const inputColumnsOf = (table: ColumnarData, target: string, report: ProgressReporter) => {
  const columns: { name: string; dtype: DType }[] = [];
  table.columns.forEach((name, j) => {
    if (name === target) return;
    const dtype = inferColumnType(table.data[j]!);
    if (dtype !== null) columns.push({ name, dtype });
    report('encoding', (0.5 * (j + 1)) / table.columns.length);
  });
  return columns;
};

/** The encoded training set the candidates, the calibration and the importance share. */
type Encoded = {
  regression: boolean;
  /** Classes (0 for regression). */
  K: number;
  y: Float64Array;
  features: Float64Array[];
  d: number;
  train: Int32Array;
  dev: Int32Array;
  cal: Int32Array;
  seed: number;
};

/**
 * Small class sets: the random forest (forest.ts), learnt from the train and dev rows. It is scored
 * on the dev rows by their out-of-bag outputs, as the boosting is by its held-out ones, and its
 * probability scaling and decision are fitted on every row's out-of-bag output.
 */
const considerForest = (
  { features, y, train, dev, K, seed }: Encoded,
  o: ParsedTrainOptions,
  objective: Objective,
  devRows: Int32Array,
  consider: (
    name: string,
    mixer: Mixer,
    devOut: Float64Array,
    fitOn: { out: Float64Array; truth: number[] },
  ) => void,
) => {
  const rows = new Int32Array(train.length + dev.length);
  rows.set(train);
  rows.set(dev, train.length);
  rows.sort();
  // USING max_rounds bounds the forest's trees as it bounds boosting's rounds.
  const trees = Math.min(FOREST_OPTIONS.trees, o.maxRounds ?? FOREST_OPTIONS.trees);
  const forest = trainForest(features, y, rows, objective, { ...FOREST_OPTIONS, trees, seed });
  const out = gbdtOutputs(forest.outOfBag, rows.length, K, forest.model.outputs);
  const position = new Map<number, number>();
  rows.forEach((row, q) => position.set(row, q));
  const devOut = new Float64Array(devRows.length * K);
  devRows.forEach((row, q) =>
    devOut.set(out.subarray(position.get(row)! * K, (position.get(row)! + 1) * K), q * K),
  );
  consider('forest', forest.model, devOut, { out, truth: Array.from(rows, (i) => y[i]!) });
};

/**
 * Trains the candidates (mean or majority, ridge for numbers, boosted trees, a random forest for
 * small class sets) and scores each on (at most MAX_STOP_ROWS) dev rows; classes also get their
 * probability scaling and decision.
 */
const trainCandidates = (e: Encoded, o: ParsedTrainOptions, report: ProgressReporter) => {
  const { regression, K, y, features, d, train, dev, seed } = e;
  const devRows = sampleRows(dev, MAX_STOP_ROWS, seed ^ 0x68e31da4);
  const devX = rowMajor(features, devRows);
  const devY = Array.from(devRows, (i) => y[i]!);
  const trainCounts = new Float64Array(K);
  if (!regression) for (const i of train) trainCounts[y[i]!]!++;
  const priors = Array.from(trainCounts, (c) => c / train.length);
  const balance = !regression && o.classBalance !== 'none';

  const candidates: Candidate[] = [];
  /**
   * Scores a candidate on the dev rows by its outputs for them (`devOut`, or its scorer's). Classes
   * get a probability scaling and a decision fitted on those outputs, or on `fitOn` when given
   * (the forest's out-of-bag outputs of every train and dev row).
   */
  const consider = (
    name: string,
    mixer: Mixer,
    devOut?: Float64Array,
    fitOn?: { out: Float64Array; truth: number[] },
  ) => {
    const out = devOut ?? makeScorer(mixer, K)(devX, devRows.length, d);
    if (regression) {
      candidates.push({ name, mixer, score: r2(devY, out), probabilities: null, decision: null });
      return;
    }
    const fit = fitOn ?? { out, truth: devY };
    const probabilities = fitScaling(fit.out, fit.truth, K);
    const decision = chooseDecision(
      scaledProbabilities(fit.out, K, probabilities),
      fit.truth,
      K,
      priors,
      balance,
    );
    const p = scaledProbabilities(out, K, probabilities);
    candidates.push({ name, mixer, score: decisionAccuracy(p, devY, K, decision), probabilities, decision });
  };

  /** The boosted candidate, scored on dev by its training (as makeScorer lays out its outputs). */
  const considerBoosted = ({ model, devScores }: ScoredBoosting) =>
    consider(
      'gbdt',
      model,
      devScores ? gbdtOutputs(devScores, devRows.length, Math.max(K, 1), model.outputs) : undefined,
    );
  const boostedRounds = o.maxRounds ?? (regression ? 500 : 300);
  const onRound = (round: number, max: number) => report('training', 0.1 + (0.9 * round) / max);
  let classWeights: number[] | null = null;
  if (regression) {
    consider('mean', { kind: 'mean', value: trainMean(y, train) });
    consider('linear', trainLinear(features, y, sampleRows(train, MAX_FIT_ROWS, seed)));
    report('training', 0.1);
    const input = prepareBoosting(features, y, null, train, devRows, { kind: 'l2' }, seed);
    considerBoosted(trainBoostedScored(input, { maxRounds: boostedRounds, seed }, onRound));
  } else {
    consider('majority', { kind: 'majority', probabilities: priors });
    report('training', 0.05);
    // Balanced class weights: a rare class counts as much as a common one in every gradient.
    let weights: Float64Array | null = null;
    if (balance) {
      classWeights = Array.from(trainCounts, (c) => train.length / (K * Math.max(c, 1)));
      weights = new Float64Array(y.length);
      for (let i = 0; i < y.length; i++) weights[i] = classWeights[y[i]!]!;
    }
    const objective: Objective = K === 2 ? { kind: 'binary' } : { kind: 'softmax', classes: K };
    const input = prepareBoosting(features, y, weights, train, devRows, objective, seed);
    report('training', 0.1);
    considerBoosted(trainBoostedScored(input, { maxRounds: boostedRounds, seed }, onRound));
    if (train.length + dev.length <= MAX_FOREST_ROWS) considerForest(e, o, objective, devRows, consider);
  }
  report('training', 1);
  return { candidates, classWeights };
};

/** The chosen candidate's held-out score of rows `X`: r2, or the balanced accuracy of its decisions. */
const heldOutScore = (e: Encoded, chosen: Candidate, out: Float64Array, truth: number[]) => {
  if (e.regression) return r2(truth, out);
  const q = decisionScores(scaledProbabilities(out, e.K, chosen.probabilities!), e.K, chosen.decision!);
  return balancedAccuracy(
    truth,
    truth.map((_t, r) => argmaxRow(q, r * e.K, e.K)),
  );
};

/** Conformal scores of the calibration rows (|error| for numbers, margins for classes). */
const calibrationOf = (
  e: Encoded,
  chosen: Candidate,
  calOut: Float64Array,
  calY: number[],
  isInteger: boolean,
): Calibration => {
  const { y, train, K } = e;
  if (e.regression) {
    const scores = thinScores(calY.map((t, j) => Math.abs(t - calOut[j]!)).sort((a, b) => a - b));
    const mean = trainMean(y, train);
    let variance = 0;
    let positive = true;
    for (const i of train) {
      variance += (y[i]! - mean) ** 2;
      if (y[i]! < 0) positive = false;
    }
    return {
      kind: 'regression',
      scores,
      targetStd: Math.sqrt(variance / train.length),
      positiveDomain: positive,
      isInteger,
    };
  }
  const p = scaledProbabilities(calOut, K, chosen.probabilities!);
  const q = decisionScores(p, K, chosen.decision!);
  return { kind: 'classification', scores: thinScores(marginScores(q, calY, K)) };
};

/** Each encoding's block of features (permuted together). */
const featureBlocks = (encodings: readonly ColumnEncoding[]) => {
  let start = 0;
  return encodings.map((e) => {
    const width = featureNames(e).length;
    const block = { column: e.column, start, width };
    start += width;
    return block;
  });
};

const trainTabular = (
  table: ColumnarData,
  target: string,
  o: ParsedTrainOptions,
  report: ProgressReporter,
): TabularArtifact => {
  const seed = o.seed ?? 42;
  const { targetValues, plan, regression } = readTarget(table, target, o);
  const { usable, y, classes, classValues } = usableTargets(table, targetValues, target, regression);
  const nUsable = y.length;
  const K = classes.length;
  const { train, dev, cal } = splitRows(nUsable, seed);

  const valuesOf = (name: string) => table.data[table.columns.indexOf(name)]!;
  const columns = inputColumnsOf(table, target, report);
  const encodings = planEncodings(
    columns,
    valuesOf,
    usable,
    y,
    train,
    regression ? { kind: 'regression' } : { kind: 'classification', classes: K },
  );
  const features = encodeColumns(encodings, valuesOf, usable);
  const d = features.length;
  report('encoding', 1);
  const encoded: Encoded = { regression, K, y, features, d, train, dev, cal, seed };

  // Candidates are compared, and the GBDT stops, on at most MAX_STOP_ROWS dev rows.
  const { candidates, classWeights } = trainCandidates(encoded, o, report);
  let chosen = candidates[0]!;
  for (const c of candidates) if (c.score > chosen.score + 1e-12) chosen = c;

  // Held-out calibration split (its first MAX_CALIBRATION_ROWS, a random sample): conformal
  // scores and the reported accuracy.
  const calRows = cal.subarray(0, MAX_CALIBRATION_ROWS);
  const calX = rowMajor(features, calRows);
  const calY = Array.from(calRows, (i) => y[i]!);
  const scorer = makeScorer(chosen.mixer, K);
  const calOut = scorer(calX, calRows.length, d);
  report('calibrating', 0.2);
  const calibration = calibrationOf(encoded, chosen, calOut, calY, plan.dtype === 'integer');
  const accuracy = heldOutScore(encoded, chosen, calOut, calY);

  // Permutation importance on (a sample of) the calibration split.
  const m = Math.min(calRows.length, IMPORTANCE_ROWS);
  const sampleY = calY.slice(0, m);
  const metric = (X: Float64Array) => heldOutScore(encoded, chosen, scorer(X, m, d), sampleY);
  const importance: FeatureImportance[] = permutationImportance(
    featureBlocks(encodings),
    calX.subarray(0, m * d),
    m,
    d,
    metric,
    seed,
  );
  const partial = partialInputs(encoded, encodings, { rows: calRows, X: calX, out: calOut }, scorer);
  report('calibrating', 1);

  return {
    schemaVersion: 2,
    engine: 'mindledger-tabular',
    target,
    targetDtype: plan.dtype,
    targetType: plan.targetType,
    targetTypeSource: plan.source,
    task: regression ? 'regression' : 'classification',
    columns,
    encodings,
    classes,
    classValues,
    mixer: chosen.mixer,
    probabilities: chosen.probabilities,
    decision: chosen.decision,
    calibration,
    importance,
    training: {
      rows: nUsable,
      seed,
      split: { train: train.length, dev: dev.length, calibration: cal.length },
      candidates: Object.fromEntries(candidates.map((c) => [c.name, c.score])),
      accuracy,
      metric: regression ? 'r2' : 'balanced_accuracy',
      classWeights,
      rounds: chosen.mixer.kind === 'gbdt' ? chosen.mixer.trees.length : null,
    },
    partial,
  };
};

/**
 * How the model answers rows that lack inputs (partial.ts): a reference sample of training rows to
 * fill them from and, for numbers, the dev rows' errors (each row's difficulty) and the conformal
 * scores normalised by each row's scale, on calibration rows whole and with 25% and 50% of their
 * inputs masked at random.
 */
const partialInputs = (
  { features, y, train, dev, K, seed, regression }: Encoded,
  encodings: ColumnEncoding[],
  calibration: { rows: Int32Array; X: Float64Array; out: Float64Array },
  scorer: Scorer,
): PartialModel => {
  const { rows: calRows, X: calX, out: calOut } = calibration;
  const d = features.length;
  let partial = planPartial(encodings, features, train, y, regression ? 0 : K, seed);
  if (!regression) return partial;
  const difficulty = difficultyRows(dev, d, seed);
  const difficultyX = rowMajor(features, difficulty);
  const difficultyOut = scorer(difficultyX, difficulty.length, d);
  partial = withDifficulty(
    partial,
    difficultyX,
    Array.from(difficulty, (i, j) => Math.abs(y[i]! - difficultyOut[j]!)),
  );
  const runtime = makePartial(partial, encodings, d);
  const C = runtime.columns;
  const scores: number[][] = [[], [], []];
  const scoreRows = (n: number, masked: Uint8Array | null) => {
    const X = calX.subarray(0, n * d);
    let status = runtime.statusOf(X, n);
    if (masked) {
      status ??= new Uint8Array(n * C);
      for (let i = 0; i < status.length; i++) if (masked[i] === MISSING) status[i] = MISSING;
    }
    let values: Float64Array;
    let spread: Float64Array | null = null;
    if (status) {
      const e = runtime.expand(X, n, status);
      ({ mean: values, spread } = runtime.fold(e, scorer(e.X, e.n, d)));
    } else values = calOut.subarray(0, n); // rows as they are: scored with the calibration split
    const sigma = runtime.scales(X, n, status, spread);
    for (let r = 0; r < n; r++)
      scores[groupOf(status, r, partial.columns)]!.push(Math.abs(y[calRows[r]!]! - values[r]!) / sigma[r]!);
  };
  scoreRows(Math.min(calRows.length, MAX_WHOLE_CALIBRATION), null);
  const masked = Math.min(calRows.length, MAX_MASKED_CALIBRATION);
  MASKED_SHARES.forEach((share, k) =>
    scoreRows(masked, randomMask(partial, masked, share, seed ^ (0x2545f491 + k))),
  );
  const all = scores.flat();
  return {
    ...partial,
    scores: scores.map((group) =>
      thinScores((group.length >= MIN_GROUP_SCORES ? group : all).sort((a, b) => a - b)),
    ),
  };
};
