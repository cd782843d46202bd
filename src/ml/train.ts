import type { Artifact, Calibration, Mixer } from './artifact';
import {
  categoryKey,
  featurize,
  inferType,
  makeFeaturizer,
  planEncoding,
  toNumber,
  type DType,
  type Row,
} from './dataset';
import { gbdtScores, softmaxInPlace, trainGbdt } from './gbdt';
import { linearScore, trainLinear } from './linear';
import { balancedAccuracy, r2 } from './metrics';
import { shuffledIndices } from './random';

export type TrainOptions = { seed?: number; maxRounds?: number };

export class TrainingError extends Error {}

const MAX_CLASSES = 100;

/** Predictions of a mixer for rows `idx` (regression: values; classification: probabilities). */
export const mixerOutputs = (
  mixer: Mixer,
  X: Float64Array,
  d: number,
  idx: ArrayLike<number>,
  classes: number,
) => {
  const K = classes === 0 ? 1 : classes;
  const out = new Float64Array(idx.length * K);
  if (mixer.kind === 'gbdt') {
    const rows = new Float64Array(idx.length * d);
    for (let j = 0; j < idx.length; j++) rows.set(X.subarray(idx[j]! * d, idx[j]! * d + d), j * d);
    out.set(gbdtScores(mixer, rows, idx.length, d));
    if (classes !== 0) for (let j = 0; j < idx.length; j++) softmaxInPlace(out, j * K, K);
  } else if (mixer.kind === 'linear') {
    for (let j = 0; j < idx.length; j++) out[j] = linearScore(mixer, X, idx[j]! * d);
  } else if (mixer.kind === 'mean') out.fill(mixer.value);
  else for (let j = 0; j < idx.length; j++) out.set(mixer.probabilities, j * K);
  return out;
};

const argmax = (p: Float64Array, offset: number, K: number) => {
  let best = 0;
  for (let k = 1; k < K; k++) if (p[offset + k]! > p[offset + best]!) best = k;
  return best;
};

/**
 * Trains a model for `target` on `rows`: infers column types, encodes features, splits
 * train/dev/calibration (80/10/10, seeded), trains the candidates (gradient-boosted trees, ridge,
 * baseline), keeps the best on dev, and calibrates its confidence on the held-out split.
 */
export const trainModel = (rows: readonly Row[], target: string, options: TrainOptions = {}): Artifact => {
  const seed = options.seed ?? 42;
  if (rows.length === 0) throw new TrainingError('The training query returned no rows');
  const allColumns = Object.keys(rows[0]!);
  if (!allColumns.includes(target))
    throw new TrainingError(
      `The target column ${target} is not among the query's columns: ${allColumns.join(', ')}`,
    );

  const targetDtype = inferType(rows.map((r) => r[target]));
  if (targetDtype === null) throw new TrainingError(`The target column ${target} has no values`);
  const regression = targetDtype === 'integer' || targetDtype === 'float';

  // Rows whose target is missing or unreadable teach nothing.
  const usable = rows.filter((r) =>
    regression ? !Number.isNaN(toNumber(r[target])) : categoryKey(r[target]) !== null,
  );
  if (usable.length < 10)
    throw new TrainingError(`Only ${usable.length} rows have a usable ${target}: at least 10 are needed`);

  const columns: { name: string; dtype: DType }[] = [];
  for (const name of allColumns) {
    if (name === target) continue;
    const dtype = inferType(usable.map((r) => r[name]));
    if (dtype !== null) columns.push({ name, dtype });
  }
  const encodings = columns.map((c) =>
    planEncoding(
      c.name,
      c.dtype,
      usable.map((r) => r[c.name]),
    ),
  );
  const featurizer = makeFeaturizer(encodings);
  const d = featurizer.width;
  const X = featurize(featurizer, usable);

  let classes: string[] = [];
  const y = new Float64Array(usable.length);
  if (regression) usable.forEach((r, i) => (y[i] = toNumber(r[target])));
  else {
    const counts = new Map<string, number>();
    for (const r of usable)
      counts.set(categoryKey(r[target])!, (counts.get(categoryKey(r[target])!) ?? 0) + 1);
    classes = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k]) => k);
    if (classes.length > MAX_CLASSES)
      throw new TrainingError(
        `${target} has ${classes.length} distinct values: at most ${MAX_CLASSES} classes are supported`,
      );
    if (classes.length < 2)
      throw new TrainingError(`${target} has a single value: there is nothing to predict`);
    const index = new Map(classes.map((c, i) => [c, i]));
    usable.forEach((r, i) => (y[i] = index.get(categoryKey(r[target])!)!));
  }

  const order = shuffledIndices(usable.length, seed);
  const nDev = Math.max(1, Math.floor(usable.length * 0.1));
  const nCal = Math.max(1, Math.floor(usable.length * 0.1));
  const train = Int32Array.from(order.slice(0, usable.length - nDev - nCal));
  const dev = Int32Array.from(order.slice(usable.length - nDev - nCal, usable.length - nCal));
  const cal = Int32Array.from(order.slice(usable.length - nCal));
  const K = classes.length;

  const candidates: Record<string, number> = {};
  let best: { name: string; mixer: Mixer; score: number } | null = null;
  const consider = (name: string, mixer: Mixer) => {
    const out = mixerOutputs(mixer, X, d, dev, regression ? 0 : K);
    const truth = Array.from(dev, (i) => y[i]!);
    let score: number;
    if (regression) score = r2(truth, out);
    else
      score = balancedAccuracy(
        truth,
        Array.from(dev, (_i, j) => argmax(out, j * K, K)),
      );
    candidates[name] = score;
    if (!best || score > best.score + 1e-12) best = { name, mixer, score };
  };

  if (regression) {
    let mean = 0;
    for (const i of train) mean += y[i]!;
    consider('mean', { kind: 'mean', value: mean / train.length });
    consider('linear', trainLinear(X, d, y, train));
    consider('gbdt', trainGbdt(X, d, y, train, dev, 0, null, { maxRounds: options.maxRounds }));
  } else {
    const counts = new Float64Array(K);
    for (const i of train) counts[y[i]!]!++;
    const probabilities = Array.from(counts, (c) => c / train.length);
    consider('majority', { kind: 'majority', probabilities });
    // Balanced class weights: a rare class counts as much as a common one.
    const weights = new Float64Array(usable.length);
    for (let i = 0; i < usable.length; i++) weights[i] = train.length / (K * Math.max(counts[y[i]!]!, 1));
    consider('gbdt', trainGbdt(X, d, y, train, dev, K, weights, { maxRounds: options.maxRounds }));
  }
  const chosen = best as unknown as { name: string; mixer: Mixer; score: number };

  const calOut = mixerOutputs(chosen.mixer, X, d, cal, regression ? 0 : K);
  let calibration: Calibration;
  let accuracy: number;
  if (regression) {
    const truth = Array.from(cal, (i) => y[i]!);
    const scores = truth.map((t, j) => Math.abs(t - calOut[j]!)).sort((a, b) => a - b);
    let mean = 0;
    for (const i of train) mean += y[i]!;
    mean /= train.length;
    let variance = 0;
    for (const i of train) variance += (y[i]! - mean) ** 2;
    calibration = {
      kind: 'regression',
      scores,
      targetStd: Math.sqrt(variance / train.length),
      positiveDomain: Array.from(train).every((i) => y[i]! >= 0),
      isInteger: targetDtype === 'integer',
    };
    accuracy = r2(truth, calOut);
  } else {
    const scores: number[] = [];
    const predicted: number[] = [];
    cal.forEach((i, j) => {
      const trueClass = y[i]!;
      let other = 0;
      for (let k = 0; k < K; k++) if (k !== trueClass) other = Math.max(other, calOut[j * K + k]!);
      scores.push(0.5 - (calOut[j * K + trueClass]! - other) / 2);
      predicted.push(argmax(calOut, j * K, K));
    });
    calibration = { kind: 'classification', scores: scores.sort((a, b) => a - b) };
    accuracy = balancedAccuracy(
      Array.from(cal, (i) => y[i]!),
      predicted,
    );
  }

  return {
    schemaVersion: 1,
    engine: 'mindledger-tabular',
    target,
    targetDtype,
    task: regression ? 'regression' : 'classification',
    columns,
    encodings,
    classes,
    mixer: chosen.mixer,
    calibration,
    training: {
      rows: usable.length,
      seed,
      split: { train: train.length, dev: dev.length, calibration: cal.length },
      candidates,
      accuracy,
      metric: regression ? 'r2' : 'balanced_accuracy',
    },
  };
};
