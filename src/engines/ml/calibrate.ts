/**
 * Classification after the mixer: probabilities made calibrated, a decision rule for balanced
 * accuracy, and the conformal nonconformity scores. Trained with class weights, a GBDT's
 * probabilities lean towards rare classes; a scaling fitted on the dev split (unweighted log-loss)
 * brings them back to observed frequencies, and the decision then divides by the class priors
 * (or moves the two-class threshold to the dev split's best balanced accuracy).
 */
import { softmaxRow } from './gbdt';
import { balancedAccuracy } from './metrics';

// Module-level references: inside vm contexts (jest) every global lookup in a hot loop is slow.
const { log, max: maxOf } = Math;

/** logits' = scale · logits + bias, then softmax: temperature plus per-class bias (vector scaling). */
export type ProbabilityScaling = { scale: number; bias: number[] };
/** Added to log-probabilities before the argmax. */
export type DecisionRule = { rule: 'argmax' | 'prior' | 'threshold'; offsets: number[] };

/** Calibrated probabilities (rows × K) from logits. */
export const scaledProbabilities = (logits: Float64Array, K: number, s: ProbabilityScaling) => {
  const p = new Float64Array(logits.length);
  for (let r = 0; r < logits.length / K; r++) {
    for (let k = 0; k < K; k++) p[r * K + k] = s.scale * logits[r * K + k]! + s.bias[k]!;
    softmaxRow(p, p, r * K, K);
  }
  return p;
};

/** The decision's view of the probabilities: softmax(log p + offsets), rows × K. */
export const decisionScores = (p: Float64Array, K: number, d: DecisionRule) => {
  const q = new Float64Array(p.length);
  for (let r = 0; r < p.length / K; r++) {
    for (let k = 0; k < K; k++) q[r * K + k] = log(maxOf(p[r * K + k]!, 1e-300)) + d.offsets[k]!;
    softmaxRow(q, q, r * K, K);
  }
  return q;
};

export const argmaxRow = (p: ArrayLike<number>, offset: number, K: number) => {
  let best = 0;
  for (let k = 1; k < K; k++) if (p[offset + k]! > p[offset + best]!) best = k;
  return best;
};

const negLogLikelihood = (logits: Float64Array, y: ArrayLike<number>, K: number, s: ProbabilityScaling) => {
  const p = scaledProbabilities(logits, K, s);
  let loss = 0;
  for (let r = 0; r < y.length; r++) loss -= log(maxOf(p[r * K + y[r]!]!, 1e-300));
  // A weak pull towards the identity keeps tiny dev splits from extreme scalings.
  loss += 0.5 * ((s.scale - 1) ** 2 + s.bias.reduce((a, b) => a + b * b, 0));
  return loss;
};

/** Solves the symmetric positive definite system A x = b (small, Gaussian elimination). */
const solve = (A: Float64Array, b: Float64Array, m: number) => {
  const M = Float64Array.from(A);
  const x = Float64Array.from(b);
  for (let c = 0; c < m; c++) {
    const pivot = M[c * m + c]!;
    for (let r = c + 1; r < m; r++) {
      const f = M[r * m + c]! / pivot;
      for (let k = c; k < m; k++) M[r * m + k]! -= f * M[c * m + k]!;
      x[r]! -= f * x[c]!;
    }
  }
  for (let c = m - 1; c >= 0; c--) {
    let s = x[c]!;
    for (let k = c + 1; k < m; k++) s -= M[c * m + k]! * x[k]!;
    x[c] = s / M[c * m + c]!;
  }
  return x;
};

/**
 * Fits the scaling by Newton's method on the dev logits (parameters: the scale, and a bias per
 * class but the first; with more than 10 classes, the scale only).
 */
export const fitScaling = (logits: Float64Array, y: ArrayLike<number>, K: number): ProbabilityScaling => {
  const withBias = K <= 10;
  const m = withBias ? K : 1; // [scale, bias_1 … bias_{K−1}]
  let current: ProbabilityScaling = { scale: 1, bias: new Array<number>(K).fill(0) };
  let loss = negLogLikelihood(logits, y, K, current);
  for (let iteration = 0; iteration < 30; iteration++) {
    const p = scaledProbabilities(logits, K, current);
    const g = new Float64Array(m);
    const H = new Float64Array(m * m);
    const J = new Float64Array(m * K); // ∂z_k/∂θ_j
    for (let r = 0; r < y.length; r++) {
      for (let k = 0; k < K; k++) {
        J[k] = logits[r * K + k]!;
        for (let j = 1; j < m; j++) J[j * K + k] = j === k ? 1 : 0;
      }
      // dL/dz = p − onehot(y); d²L/dz² = diag(p) − p pᵀ.
      for (let j = 0; j < m; j++) {
        let gj = 0;
        let jp = 0;
        for (let k = 0; k < K; k++) {
          const pk = p[r * K + k]!;
          gj += J[j * K + k]! * (pk - (y[r] === k ? 1 : 0));
          jp += J[j * K + k]! * pk;
        }
        g[j]! += gj;
        for (let i = 0; i <= j; i++) {
          let s = 0;
          let ip = 0;
          for (let k = 0; k < K; k++) {
            const pk = p[r * K + k]!;
            s += J[j * K + k]! * J[i * K + k]! * pk;
            ip += J[i * K + k]! * pk;
          }
          H[j * m + i]! += s - jp * ip;
        }
      }
    }
    g[0]! += current.scale - 1;
    for (let j = 1; j < m; j++) g[j]! += current.bias[j]!;
    for (let j = 0; j < m; j++) {
      H[j * m + j]! += 1;
      for (let i = 0; i < j; i++) H[i * m + j] = H[j * m + i]!;
    }
    const step = solve(H, g, m);
    let t = 1;
    let accepted = false;
    for (let halvings = 0; halvings < 20; halvings++, t /= 2) {
      const next: ProbabilityScaling = {
        scale: current.scale - t * step[0]!,
        bias: current.bias.map((b, k) => (k >= 1 && k < m ? b - t * step[k]! : b)),
      };
      const nextLoss = negLogLikelihood(logits, y, K, next);
      if (nextLoss < loss) {
        accepted = loss - nextLoss > 1e-10 * Math.max(1, Math.abs(loss));
        current = next;
        loss = nextLoss;
        break;
      }
    }
    if (!accepted) break;
  }
  return current;
};

/**
 * The decision rule: plain argmax when classes are about balanced; otherwise class priors divided
 * out (balanced accuracy's Bayes rule for calibrated probabilities) and, for two classes, the
 * threshold moved to the dev split's best balanced accuracy.
 */
export const chooseDecision = (
  p: Float64Array,
  y: ArrayLike<number>,
  K: number,
  priors: readonly number[],
  balance: boolean,
): DecisionRule => {
  const largest = Math.max(...priors);
  const smallest = Math.min(...priors);
  if (!balance || largest < 1.5 * smallest) return { rule: 'argmax', offsets: new Array<number>(K).fill(0) };
  const prior = priors.map((pk) => -log(maxOf(pk, 1e-12)));
  if (K !== 2) return { rule: 'prior', offsets: prior };
  // z = log p1 − log p0; predict 1 when z > τ. Sweep τ over the dev split's z values.
  const n = y.length;
  const z = Float64Array.from({ length: n }, (_, r) => Math.log(p[r * 2 + 1]! / Math.max(p[r * 2]!, 1e-300)));
  const order = Array.from({ length: n }, (_, r) => r).sort((a, b) => z[a]! - z[b]! || a - b);
  let positives = 0;
  for (let r = 0; r < n; r++) if (y[r] === 1) positives++;
  const negatives = n - positives;
  if (positives === 0 || negatives === 0) return { rule: 'prior', offsets: prior };
  // Threshold below everything: all predicted 1.
  let tp = positives;
  let tn = 0;
  let bestScore = 0.5;
  let bestTau = -Infinity;
  for (let j = 0; j < n; j++) {
    const r = order[j]!;
    if (y[r] === 1) tp--;
    else tn++;
    if (j + 1 < n && z[order[j + 1]!] === z[r]) continue;
    const score = (tp / positives + tn / negatives) / 2;
    if (score > bestScore + 1e-12) {
      bestScore = score;
      bestTau = j + 1 < n ? (z[r]! + z[order[j + 1]!]!) / 2 : z[r]! + 1;
    }
  }
  const tau0 = prior[0]! - prior[1]!; // the prior rule's threshold: log(π1/π0)
  if (!Number.isFinite(bestTau)) return { rule: 'prior', offsets: prior };
  // The dev split is small: half way between the prior rule and the dev optimum.
  const tau = (bestTau + tau0) / 2;
  return { rule: 'threshold', offsets: [0, -tau] };
};

/** Balanced accuracy of a decision on probabilities p (rows × K). */
export const decisionAccuracy = (p: Float64Array, y: ArrayLike<number>, K: number, d: DecisionRule) => {
  const q = decisionScores(p, K, d);
  const predicted = Array.from({ length: y.length }, (_, r) => argmaxRow(q, r * K, K));
  return balancedAccuracy(Array.from(y), predicted);
};

/** Lightwood's margin nonconformity, 0.5 − (q_y − max_{k≠y} q_k)/2, sorted ascending. */
export const marginScores = (q: Float64Array, y: ArrayLike<number>, K: number) => {
  const scores: number[] = [];
  for (let r = 0; r < y.length; r++) {
    const t = y[r]!;
    let other = 0;
    for (let k = 0; k < K; k++) if (k !== t) other = Math.max(other, q[r * K + k]!);
    scores.push(0.5 - (q[r * K + t]! - other) / 2);
  }
  return scores.sort((a, b) => a - b);
};

/** Stored conformal scores: at most this many quantiles of the sorted calibration scores. */
const MAX_STORED_SCORES = 1000;

/** Evenly spaced order statistics of sorted scores: the interval quantiles, in a bounded artifact. */
export const thinScores = (sorted: number[], max = MAX_STORED_SCORES) =>
  sorted.length <= max
    ? sorted
    : Array.from({ length: max }, (_, k) => sorted[Math.round((k * (sorted.length - 1)) / (max - 1))]!);
