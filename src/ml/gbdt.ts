/**
 * Histogram gradient-boosted trees on typed arrays: regression (squared error) and classification
 * (softmax over K classes, binary included), with early stopping on a held-out dev split.
 * Missing values (NaN) always take the left branch. Deterministic: no sampling.
 */

export type Tree = { f: number[]; t: number[]; l: number[]; r: number[]; v: number[] };
export type GbdtModel = {
  kind: 'gbdt';
  /** 1 for regression, K for K classes (one tree per class per round). */
  outputs: number;
  base: number[];
  trees: Tree[][];
};

export type GbdtOptions = {
  learningRate?: number;
  maxDepth?: number;
  minLeaf?: number;
  lambda?: number;
  maxRounds?: number;
  patience?: number;
  bins?: number;
};

type Binned = { bins: Uint8Array[]; edges: Float64Array[] };

/** Up to `maxBins` split points per feature from the training values' quantiles; bin 0 is "missing". */
const binFeatures = (X: Float64Array, n: number, d: number, maxBins: number): Binned => {
  const bins: Uint8Array[] = [];
  const edges: Float64Array[] = [];
  const column = new Float64Array(n);
  for (let f = 0; f < d; f++) {
    let m = 0;
    for (let i = 0; i < n; i++) {
      const v = X[i * d + f]!;
      if (!Number.isNaN(v)) column[m++] = v;
    }
    const sorted = column.subarray(0, m).slice().sort();
    const cuts: number[] = [];
    for (let k = 1; k < maxBins; k++) {
      const v = sorted[Math.floor((k * m) / maxBins)];
      if (v !== undefined && (cuts.length === 0 || v > cuts[cuts.length - 1]!)) cuts.push(v);
    }
    // The largest value needs no cut: every value above the last cut falls in the last bin.
    if (cuts.length && cuts[cuts.length - 1] === sorted[m - 1]) cuts.pop();
    const e = Float64Array.from(cuts);
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const v = X[i * d + f]!;
      if (Number.isNaN(v)) continue;
      let lo = 0;
      let hi = e.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (e[mid]! < v) lo = mid + 1;
        else hi = mid;
      }
      b[i] = lo + 1;
    }
    bins.push(b);
    edges.push(e);
  }
  return { bins, edges };
};

type Growth = {
  binned: Binned;
  grad: Float64Array;
  hess: Float64Array;
  d: number;
  maxDepth: number;
  minLeaf: number;
  lambda: number;
  rate: number;
};

const growTree = (g: Growth, rows: Int32Array): Tree => {
  const tree: Tree = { f: [], t: [], l: [], r: [], v: [] };
  const width = 256;
  const G = new Float64Array(width);
  const H = new Float64Array(width);
  const C = new Int32Array(width);

  const leaf = (node: number, sumG: number, sumH: number) => {
    tree.f[node] = -1;
    tree.t[node] = 0;
    tree.l[node] = -1;
    tree.r[node] = -1;
    tree.v[node] = (-sumG / (sumH + g.lambda)) * g.rate;
  };

  const build = (idx: Int32Array, depth: number): number => {
    const node = tree.f.length;
    tree.f.push(-1);
    let sumG = 0;
    let sumH = 0;
    for (let k = 0; k < idx.length; k++) {
      sumG += g.grad[idx[k]!]!;
      sumH += g.hess[idx[k]!]!;
    }
    if (depth >= g.maxDepth || idx.length < 2 * g.minLeaf) {
      leaf(node, sumG, sumH);
      return node;
    }
    const parentScore = (sumG * sumG) / (sumH + g.lambda);
    let bestGain = 1e-12;
    let bestFeature = -1;
    let bestBin = -1;
    for (let f = 0; f < g.d; f++) {
      const bins = g.binned.bins[f]!;
      const nb = g.binned.edges[f]!.length + 2;
      if (nb <= 2) continue;
      G.fill(0, 0, nb);
      H.fill(0, 0, nb);
      C.fill(0, 0, nb);
      for (let k = 0; k < idx.length; k++) {
        const i = idx[k]!;
        const b = bins[i]!;
        G[b] = G[b]! + g.grad[i]!;
        H[b] = H[b]! + g.hess[i]!;
        C[b]!++;
      }
      let gl = 0;
      let hl = 0;
      let cl = 0;
      for (let b = 0; b < nb - 1; b++) {
        gl += G[b]!;
        hl += H[b]!;
        cl += C[b]!;
        if (b === 0) continue; // a split must put some real values left
        const cr = idx.length - cl;
        if (cl < g.minLeaf || cr < g.minLeaf) continue;
        const gr = sumG - gl;
        const hr = sumH - hl;
        const gain = (gl * gl) / (hl + g.lambda) + (gr * gr) / (hr + g.lambda) - parentScore;
        if (gain > bestGain) {
          bestGain = gain;
          bestFeature = f;
          bestBin = b;
        }
      }
    }
    if (bestFeature < 0) {
      leaf(node, sumG, sumH);
      return node;
    }
    const bins = g.binned.bins[bestFeature]!;
    let nLeft = 0;
    for (let k = 0; k < idx.length; k++) if (bins[idx[k]!]! <= bestBin) nLeft++;
    const left = new Int32Array(nLeft);
    const right = new Int32Array(idx.length - nLeft);
    let a = 0;
    let c = 0;
    for (let k = 0; k < idx.length; k++) {
      const i = idx[k]!;
      if (bins[i]! <= bestBin) left[a++] = i;
      else right[c++] = i;
    }
    tree.f[node] = bestFeature;
    tree.t[node] = g.binned.edges[bestFeature]![bestBin - 1]!;
    tree.l[node] = build(left, depth + 1);
    tree.r[node] = build(right, depth + 1);
    tree.v[node] = 0;
    return node;
  };
  build(rows, 0);
  return tree;
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
  let max = -Infinity;
  for (let k = 0; k < K; k++) max = Math.max(max, scores[offset + k]!);
  let sum = 0;
  for (let k = 0; k < K; k++) {
    const e = Math.exp(scores[offset + k]! - max);
    scores[offset + k] = e;
    sum += e;
  }
  for (let k = 0; k < K; k++) scores[offset + k]! /= sum;
};

/**
 * Trains on rows `train` and stops when the loss on rows `dev` has not improved for `patience`
 * rounds, keeping the best round. `y` holds values (regression) or class indices (classification);
 * `weights` balance classes.
 */
export const trainGbdt = (
  X: Float64Array,
  d: number,
  y: Float64Array,
  train: Int32Array,
  dev: Int32Array,
  classes: number,
  weights: Float64Array | null,
  options: GbdtOptions = {},
): GbdtModel => {
  const n = y.length;
  const K = classes === 0 ? 1 : classes;
  const rate = options.learningRate ?? 0.1;
  const maxRounds = options.maxRounds ?? (classes === 0 ? 500 : 200);
  const patience = options.patience ?? 25;
  const binned = binFeatures(X, n, d, options.bins ?? 64);
  const w = weights ?? new Float64Array(n).fill(1);

  let base: number[];
  if (classes === 0) {
    let s = 0;
    for (const i of train) s += y[i]!;
    base = [s / train.length];
  } else {
    const counts = new Float64Array(K);
    for (const i of train) counts[y[i]!]! += w[i]!;
    const total = counts.reduce((a, b) => a + b, 0);
    base = Array.from(counts, (c) => Math.log(Math.max(c, 1e-9) / total));
  }
  const scores = new Float64Array(n * K);
  for (let i = 0; i < n; i++) for (let k = 0; k < K; k++) scores[i * K + k] = base[k]!;
  const grad = new Float64Array(n);
  const hess = new Float64Array(n);
  const probs = new Float64Array(n * K);
  const trees: Tree[][] = [];
  let best = Infinity;
  let bestRounds = 0;

  const devLoss = () => {
    let loss = 0;
    let weight = 0;
    for (const i of dev) {
      if (classes === 0) {
        const e = scores[i]! - y[i]!;
        loss += e * e;
        weight += 1;
      } else {
        const p = probs.subarray(i * K, i * K + K);
        p.set(scores.subarray(i * K, i * K + K));
        softmaxInPlace(probs, i * K, K);
        loss -= w[i]! * Math.log(Math.max(probs[i * K + y[i]!]!, 1e-12));
        weight += w[i]!;
      }
    }
    return loss / Math.max(weight, 1e-12);
  };

  for (let round = 0; round < maxRounds; round++) {
    const roundTrees: Tree[] = [];
    if (classes !== 0)
      for (const i of train) {
        probs.set(scores.subarray(i * K, i * K + K), i * K);
        softmaxInPlace(probs, i * K, K);
      }
    for (let k = 0; k < K; k++) {
      for (const i of train) {
        if (classes === 0) {
          grad[i] = scores[i]! - y[i]!;
          hess[i] = 1;
        } else {
          const p = probs[i * K + k]!;
          grad[i] = w[i]! * (p - (y[i] === k ? 1 : 0));
          hess[i] = w[i]! * Math.max(p * (1 - p), 1e-6);
        }
      }
      const tree = growTree(
        {
          binned,
          grad,
          hess,
          d,
          maxDepth: options.maxDepth ?? 6,
          minLeaf: options.minLeaf ?? 10,
          lambda: options.lambda ?? 1,
          rate,
        },
        train,
      );
      roundTrees.push(tree);
    }
    // Scores of every row (train and dev) move by the new trees.
    for (let i = 0; i < n; i++)
      for (let k = 0; k < K; k++) scores[i * K + k]! += evalTree(roundTrees[k]!, X, i * d);
    trees.push(roundTrees);
    const loss = dev.length ? devLoss() : 0;
    if (loss < best - 1e-12) {
      best = loss;
      bestRounds = trees.length;
    } else if (trees.length - bestRounds >= patience) break;
  }
  return { kind: 'gbdt', outputs: K, base, trees: trees.slice(0, Math.max(bestRounds, 1)) };
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
 * Raw scores for `n` rows of `d` features (row-major), with the compiled ensemble. Tree by tree
 * over all rows: one tree's nodes stay in cache while every row walks it.
 */
export const compiledScores = (c: CompiledGbdt, X: Float64Array, n: number, d: number): Float64Array => {
  const K = c.outputs;
  const rounds = c.roots.length / K;
  const out = new Float64Array(n * K);
  const { feature, threshold, left, right, value, roots } = c;
  // Missing values go left; as -Infinity they do so by the comparison alone (thresholds are finite).
  const x = X.map((v) => (v !== v ? -Infinity : v));
  for (let k = 0; k < K; k++) {
    const base = c.base[k]!;
    for (let row = 0; row < n; row++) out[row * K + k] = base;
    for (let r = 0; r < rounds; r++) {
      const root = roots[r * K + k]!;
      for (let row = 0; row < n; row++) {
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
  return out;
};
