/**
 * Ridge regression on standardised features (missing values at the mean), solved exactly by a
 * Cholesky factorisation: the second candidate for numeric targets, strong when the target is
 * close to a linear function of the inputs.
 */
export type LinearModel = {
  kind: 'linear';
  means: number[];
  scales: number[];
  weights: number[];
  intercept: number;
};

/** Fits on rows `train` of feature columns (one Float64Array per feature, NaN = missing). */
export const trainLinear = (
  features: readonly Float64Array[],
  y: Float64Array,
  train: Int32Array,
  lambda = 1e-3,
): LinearModel => {
  const d = features.length;
  const means = new Array<number>(d).fill(0);
  const scales = new Array<number>(d).fill(1);
  for (let f = 0; f < d; f++) {
    const x = features[f]!;
    let s = 0;
    let c = 0;
    for (const i of train) {
      const v = x[i]!;
      if (v === v) {
        s += v;
        c++;
      }
    }
    means[f] = c ? s / c : 0;
    let ss = 0;
    for (const i of train) {
      const v = x[i]!;
      if (v === v) ss += (v - means[f]!) ** 2;
    }
    scales[f] = c > 1 && ss > 0 ? Math.sqrt(ss / c) : 1;
  }
  let yMean = 0;
  for (const i of train) yMean += y[i]!;
  yMean /= Math.max(train.length, 1);
  const A = new Float64Array(d * d);
  const b = new Float64Array(d);
  const z = new Float64Array(d);
  for (const i of train) {
    for (let f = 0; f < d; f++) {
      const v = features[f]![i]!;
      z[f] = v === v ? (v - means[f]!) / scales[f]! : 0;
    }
    const t = y[i]! - yMean;
    for (let p = 0; p < d; p++) {
      const zp = z[p]!;
      if (zp === 0) continue;
      b[p]! += zp * t;
      const row = p * d;
      for (let q = 0; q <= p; q++) A[row + q]! += zp * z[q]!;
    }
  }
  for (let p = 0; p < d; p++) {
    A[p * d + p]! += lambda * train.length;
    for (let q = 0; q < p; q++) A[q * d + p] = A[p * d + q]!;
  }
  // Cholesky: A = L Lᵀ, then two triangular solves.
  const L = new Float64Array(d * d);
  for (let p = 0; p < d; p++) {
    for (let q = 0; q <= p; q++) {
      let s = A[p * d + q]!;
      for (let k = 0; k < q; k++) s -= L[p * d + k]! * L[q * d + k]!;
      L[p * d + q] = p === q ? Math.sqrt(Math.max(s, 1e-12)) : s / L[q * d + q]!;
    }
  }
  const u = new Float64Array(d);
  for (let p = 0; p < d; p++) {
    let s = b[p]!;
    for (let k = 0; k < p; k++) s -= L[p * d + k]! * u[k]!;
    u[p] = s / L[p * d + p]!;
  }
  const w = new Float64Array(d);
  for (let p = d - 1; p >= 0; p--) {
    let s = u[p]!;
    for (let k = p + 1; k < d; k++) s -= L[k * d + p]! * w[k]!;
    w[p] = s / L[p * d + p]!;
  }
  return { kind: 'linear', means, scales, weights: Array.from(w), intercept: yMean };
};

export const linearScore = (m: LinearModel, X: Float64Array, offset: number) => {
  let s = m.intercept;
  for (let f = 0; f < m.weights.length; f++) {
    const v = X[offset + f]!;
    if (!Number.isNaN(v)) s += (m.weights[f]! * (v - m.means[f]!)) / m.scales[f]!;
  }
  return s;
};
