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
