/**
 * Gradient-boosted tree ensembles as stored in artifacts, and their prediction. Training lives in
 * boost.ts / histogramTree.ts. Missing values (NaN) always take the left branch.
 */

// Module-level references: inside vm contexts (jest) every global lookup in a hot loop is slow.
const { exp, max: maxOf } = Math;
const NEGATIVE_INFINITY = -Infinity;

export type Tree = { f: number[]; t: number[]; l: number[]; r: number[]; v: number[] };
export type GbdtModel = {
  kind: 'gbdt';
  /**
   * Trees per round: 1 for regression and, in schema 2, for two classes (the second class's logit,
   * the first's being 0); K for K classes (one tree per class per round, schema 1's two classes too).
   */
  outputs: number;
  base: number[];
  trees: Tree[][];
};

export const evalTree = (tree: Tree, x: Float64Array, offset: number) => {
  let i = 0;
  while (tree.f[i]! >= 0) {
    const v = x[offset + tree.f[i]!]!;
    i = Number.isNaN(v) || v <= tree.t[i]! ? tree.l[i]! : tree.r[i]!;
  }
  return tree.v[i]!;
};

/** Raw scores (regression value, or K logits) for row-major features. */
export const gbdtScores = (model: GbdtModel, X: Float64Array, n: number, d: number): Float64Array => {
  const K = model.outputs;
  const out = new Float64Array(n * K);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < K; k++) {
      let s = model.base[k]!;
      for (const round of model.trees) s += evalTree(round[k]!, X, i * d);
      out[i * K + k] = s;
    }
  }
  return out;
};

export const softmaxInPlace = (scores: Float64Array, offset: number, K: number) => {
  let max = NEGATIVE_INFINITY;
  for (let k = 0; k < K; k++) max = maxOf(max, scores[offset + k]!);
  let sum = 0;
  for (let k = 0; k < K; k++) {
    const e = exp(scores[offset + k]! - max);
    scores[offset + k] = e;
    sum += e;
  }
  for (let k = 0; k < K; k++) scores[offset + k]! /= sum;
};

/**
 * A trained ensemble flattened into typed arrays (all trees' nodes end to end): prediction walks
 * contiguous memory instead of nested objects, which roughly halves the time per row.
 */
export type CompiledGbdt = {
  outputs: number;
  base: Float64Array;
  roots: Int32Array;
  feature: Int32Array;
  threshold: Float64Array;
  left: Int32Array;
  right: Int32Array;
  value: Float64Array;
};

export const compileGbdt = (model: GbdtModel): CompiledGbdt => {
  const K = model.outputs;
  let total = 0;
  for (const round of model.trees) for (const tree of round) total += tree.f.length;
  const c: CompiledGbdt = {
    outputs: K,
    base: Float64Array.from(model.base),
    roots: new Int32Array(model.trees.length * K),
    feature: new Int32Array(total),
    threshold: new Float64Array(total),
    left: new Int32Array(total),
    right: new Int32Array(total),
    value: new Float64Array(total),
  };
  let offset = 0;
  model.trees.forEach((round, r) =>
    round.forEach((tree, k) => {
      c.roots[r * K + k] = offset;
      for (let i = 0; i < tree.f.length; i++) {
        c.feature[offset + i] = tree.f[i]!;
        c.threshold[offset + i] = tree.t[i]!;
        c.left[offset + i] = tree.l[i]! < 0 ? -1 : offset + tree.l[i]!;
        c.right[offset + i] = tree.r[i]! < 0 ? -1 : offset + tree.r[i]!;
        c.value[offset + i] = tree.v[i]!;
      }
      offset += tree.f.length;
    }),
  );
  return c;
};

/**
 * Features ready for `scoreRowsInto`: missing values (NaN) become -Infinity, which goes left by the
 * comparison alone (thresholds are finite).
 */
export const missingAsLeft = (X: Float64Array, into: Float64Array = new Float64Array(X.length)) => {
  for (let i = 0; i < X.length; i++) {
    const v = X[i]!;
    into[i] = v !== v ? NEGATIVE_INFINITY : v;
  }
  return into;
};

/**
 * Raw scores of rows [from, to) of `x` (`d` features, row-major, prepared by `missingAsLeft`) into
 * `out` (K per row). Tree by tree over the rows: one tree's nodes stay in cache while every row
 * walks it. Rows are independent, so ranges may be scored on different threads into one `out`.
 */
export const scoreRowsInto = (
  c: CompiledGbdt,
  x: Float64Array,
  d: number,
  from: number,
  to: number,
  out: Float64Array,
) => {
  const K = c.outputs;
  const rounds = c.roots.length / K;
  const { feature, threshold, left, right, value, roots } = c;
  for (let k = 0; k < K; k++) {
    const base = c.base[k]!;
    for (let row = from; row < to; row++) out[row * K + k] = base;
    for (let r = 0; r < rounds; r++) {
      const root = roots[r * K + k]!;
      for (let row = from; row < to; row++) {
        const at = row * d;
        let i = root;
        let f = feature[i]!;
        while (f >= 0) {
          i = x[at + f]! <= threshold[i]! ? left[i]! : right[i]!;
          f = feature[i]!;
        }
        out[row * K + k]! += value[i]!;
      }
    }
  }
};

/** Raw scores for `n` rows of `d` features (row-major), with the compiled ensemble, on this thread. */
export const compiledScores = (c: CompiledGbdt, X: Float64Array, n: number, d: number): Float64Array => {
  const out = new Float64Array(n * c.outputs);
  scoreRowsInto(c, missingAsLeft(X), d, 0, n, out);
  return out;
};
