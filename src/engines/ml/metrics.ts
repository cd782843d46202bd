export const r2 = (truth: ArrayLike<number>, predicted: ArrayLike<number>) => {
  const n = truth.length;
  if (n === 0) return 0;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += truth[i]!;
  mean /= n;
  let ssRes = 0;
  let ssTot = 0;
  for (let i = 0; i < n; i++) {
    ssRes += (truth[i]! - predicted[i]!) ** 2;
    ssTot += (truth[i]! - mean) ** 2;
  }
  return ssTot === 0 ? (ssRes === 0 ? 1 : 0) : 1 - ssRes / ssTot;
};

/** Mean recall over the classes present in `truth`. */
export const balancedAccuracy = (truth: ArrayLike<number>, predicted: ArrayLike<number>) => {
  const hits = new Map<number, number>();
  const totals = new Map<number, number>();
  for (let i = 0; i < truth.length; i++) {
    totals.set(truth[i]!, (totals.get(truth[i]!) ?? 0) + 1);
    if (truth[i] === predicted[i]) hits.set(truth[i]!, (hits.get(truth[i]!) ?? 0) + 1);
  }
  let sum = 0;
  for (const [c, total] of totals) sum += (hits.get(c) ?? 0) / total;
  return totals.size ? sum / totals.size : 0;
};

/**
 * Expected calibration error of confidences: each row's confidence falls into one of `bins`
 * equal-width bins of [0, 1]; the error is the row-weighted mean, over bins, of |share of the
 * bin's rows that were right − the bin's mean confidence|.
 */
export const calibrationError = (confidences: ArrayLike<number>, right: ArrayLike<boolean>, bins = 10) => {
  const n = confidences.length;
  const confidence = new Float64Array(bins);
  const hits = new Float64Array(bins);
  for (let r = 0; r < n; r++) {
    const p = confidences[r]!;
    const b = Math.min(bins - 1, Math.max(0, Math.floor(p * bins)));
    confidence[b]! += p;
    if (right[r]) hits[b]!++;
  }
  let error = 0;
  for (let b = 0; b < bins; b++) error += Math.abs(hits[b]! - confidence[b]!);
  return n ? error / n : 0;
};

/**
 * Expected calibration error of class probabilities (rows × K, row-major), on the top-class
 * probability: is the most probable class right as often as its probability says?
 */
export const expectedCalibrationError = (
  probabilities: ArrayLike<number>,
  truth: ArrayLike<number>,
  K: number,
  bins = 10,
) => {
  const n = truth.length;
  const top = new Float64Array(n);
  const right = new Array<boolean>(n);
  for (let r = 0; r < n; r++) {
    let best = 0;
    for (let k = 1; k < K; k++) if (probabilities[r * K + k]! > probabilities[r * K + best]!) best = k;
    top[r] = probabilities[r * K + best]!;
    right[r] = truth[r] === best;
  }
  return calibrationError(top, right, bins);
};
