/**
 * One regression tree on gradients and hessians, grown leaf by leaf (best gain first, as LightGBM
 * does) from per-leaf histograms over quantised features. A split builds the histogram of the
 * smaller child only and gets the larger one by subtracting it from the parent's. Rows live in one
 * Int32Array partitioned in place, so no per-row objects exist while a tree grows. Bins are read
 * row-major: a row's bins share a cache line.
 */
import type { BinnedFeatures } from './binning';
import type { Tree } from './gbdt';

export type TreeParams = {
  maxLeaves: number;
  maxDepth: number;
  /** Minimum rows in a leaf. */
  minLeaf: number;
  /** Minimum sum of hessians in a leaf (keeps weighted classification leaves meaningful). */
  minHess: number;
  /** L2 regularisation of leaf values. */
  lambda: number;
  /** Shrinkage applied to leaf values. */
  rate: number;
};

/** A grown tree: the stored form, a typed copy for binned evaluation, and where its rows ended. */
export type GrownTree = {
  tree: Tree;
  /** Per node: split feature (−1 for leaves), split bin (rows with bin ≤ it go left), children, value. */
  flat: {
    feature: Int32Array;
    splitBin: Int32Array;
    left: Int32Array;
    right: Int32Array;
    value: Float64Array;
  };
  /** Rows of the tree, grouped by leaf: rows[leafBegin[j] .. leafEnd[j]) reached leaf node leafNode[j]. */
  rows: Int32Array;
  leafBegin: number[];
  leafEnd: number[];
  leafNode: number[];
};

type Leaf = {
  node: number;
  begin: number;
  end: number;
  depth: number;
  sumG: number;
  sumH: number;
  hist: Float64Array | null;
  gain: number;
  feature: number;
  bin: number;
};

/** Reusable buffers for growing many trees over the same binned data. */
export type TreeGrower = ReturnType<typeof makeTreeGrower>;

export const makeTreeGrower = (binned: BinnedFeatures, maxRows: number, params: TreeParams) => {
  const { bins, features: d } = binned;
  const nBins = Int32Array.from(binned.cuts, (c) => c.length + 2);
  const offsets = new Int32Array(d);
  let totalBins = 0;
  for (let f = 0; f < d; f++) {
    offsets[f] = totalBins;
    totalBins += nBins[f]!;
  }
  // Features with a single value bin cannot split: skipped when building histograms.
  const splittable = Int32Array.from({ length: d }, (_, f) => f).filter((f) => nBins[f]! > 2);
  const ns = splittable.length;
  /** Where each splittable feature's (gradient, hessian) pairs start in a histogram. */
  const histAt = Int32Array.from(splittable, (f) => offsets[f]! * 2);
  const partition = new Int32Array(maxRows);
  const scratch = new Int32Array(maxRows);
  const pool: Float64Array[] = [];
  const take = () => pool.pop() ?? new Float64Array(totalBins * 2);

  /**
   * Sums of gradient and hessian per (feature, bin) over the rows partition[begin, end), row by
   * row: a row's bins are adjacent, and four features per step keep independent updates in
   * flight. Each bin still sums its rows in partition order, so the sums do not depend on how.
   */
  const buildHistogram = (grad: Float64Array, hess: Float64Array, begin: number, end: number) => {
    const hist = take();
    hist.fill(0);
    for (let k = begin; k < end; k++) {
      const i = partition[k]!;
      const gk = grad[i]!;
      const hk = hess[i]!;
      const row = i * d;
      let j = 0;
      for (; j + 4 <= ns; j += 4) {
        const o0 = histAt[j]! + (bins[row + splittable[j]!]! << 1);
        const o1 = histAt[j + 1]! + (bins[row + splittable[j + 1]!]! << 1);
        const o2 = histAt[j + 2]! + (bins[row + splittable[j + 2]!]! << 1);
        const o3 = histAt[j + 3]! + (bins[row + splittable[j + 3]!]! << 1);
        hist[o0]! += gk;
        hist[o0 + 1]! += hk;
        hist[o1]! += gk;
        hist[o1 + 1]! += hk;
        hist[o2]! += gk;
        hist[o2 + 1]! += hk;
        hist[o3]! += gk;
        hist[o3 + 1]! += hk;
      }
      for (; j < ns; j++) {
        const o = histAt[j]! + (bins[row + splittable[j]!]! << 1);
        hist[o]! += gk;
        hist[o + 1]! += hk;
      }
    }
    return hist;
  };

  /**
   * The best split of a leaf. Rows per bin are estimated from hessians (count × H_bin / H_leaf, as
   * LightGBM does): exact for squared error, where every hessian is 1.
   */
  const findSplit = (leaf: Leaf) => {
    leaf.gain = 0;
    leaf.feature = -1;
    const count = leaf.end - leaf.begin;
    if (leaf.depth >= params.maxDepth || count < 2 * params.minLeaf || !leaf.hist) return;
    const { lambda, minLeaf, minHess } = params;
    const hist = leaf.hist;
    const perHess = leaf.sumH > 0 ? count / leaf.sumH : 0;
    const parentScore = (leaf.sumG * leaf.sumG) / (leaf.sumH + lambda);
    let best = 1e-12;
    for (const f of splittable) {
      const base = offsets[f]! * 2;
      const nb = nBins[f]!;
      let gl = 0;
      let hl = 0;
      for (let b = 0; b < nb - 1; b++) {
        const o = base + b * 2;
        gl += hist[o]!;
        hl += hist[o + 1]!;
        if (b === 0) continue; // a split must put some real values left
        const cl = (hl * perHess + 0.5) | 0;
        if (cl < minLeaf) continue;
        if (count - cl < minLeaf) break;
        const hr = leaf.sumH - hl;
        if (hl < minHess || hr < minHess) continue;
        const gr = leaf.sumG - gl;
        const gain = (gl * gl) / (hl + lambda) + (gr * gr) / (hr + lambda) - parentScore;
        if (gain > best) {
          best = gain;
          leaf.gain = gain;
          leaf.feature = f;
          leaf.bin = b;
        }
      }
    }
  };

  /** Grows one tree over `rows` (indices into the binned data) for these gradients. */
  const grow = (rows: Int32Array, grad: Float64Array, hess: Float64Array): GrownTree => {
    const n = rows.length;
    partition.set(rows);
    const f: number[] = [-1];
    const t: number[] = [0];
    const l: number[] = [-1];
    const r: number[] = [-1];
    const v: number[] = [0];
    const splitBins: number[] = [-1];
    let sumG = 0;
    let sumH = 0;
    for (let k = 0; k < n; k++) {
      sumG += grad[rows[k]!]!;
      sumH += hess[rows[k]!]!;
    }
    const root: Leaf = {
      node: 0,
      begin: 0,
      end: n,
      depth: 0,
      sumG,
      sumH,
      hist: null,
      gain: 0,
      feature: -1,
      bin: 0,
    };
    if (params.maxDepth > 0 && n >= 2 * params.minLeaf) root.hist = buildHistogram(grad, hess, 0, n);
    findSplit(root);
    const leaves: Leaf[] = [root];

    while (leaves.length < params.maxLeaves) {
      let pick = -1;
      for (let j = 0; j < leaves.length; j++)
        if (leaves[j]!.feature >= 0 && (pick < 0 || leaves[j]!.gain > leaves[pick]!.gain)) pick = j;
      if (pick < 0) break;
      const parent = leaves[pick]!;
      // Stable partition: left rows first, right rows after, each in their previous order. Each row
      // is written to both sides and only the cursor of its own side moves: a left-or-right branch
      // would be mispredicted about half the time.
      const feature = parent.feature;
      const splitBin = parent.bin;
      let w = parent.begin;
      let s = 0;
      for (let k = parent.begin; k < parent.end; k++) {
        const i = partition[k]!;
        const goesRight = (splitBin - bins[i * d + feature]!) >>> 31;
        partition[w] = i;
        scratch[s] = i;
        w += goesRight ^ 1;
        s += goesRight;
      }
      partition.set(scratch.subarray(0, s), w);
      const hist = parent.hist!;
      const fo = offsets[parent.feature]! * 2;
      let gl = 0;
      let hl = 0;
      for (let b = 0; b <= parent.bin; b++) {
        gl += hist[fo + b * 2]!;
        hl += hist[fo + b * 2 + 1]!;
      }
      const node = parent.node;
      const left = f.length;
      const right = left + 1;
      for (let k = 0; k < 2; k++) {
        f.push(-1);
        t.push(0);
        l.push(-1);
        r.push(-1);
        v.push(0);
        splitBins.push(-1);
      }
      f[node] = parent.feature;
      t[node] = binned.cuts[parent.feature]![parent.bin - 1]!;
      l[node] = left;
      r[node] = right;
      splitBins[node] = parent.bin;
      const depth = parent.depth + 1;
      const a: Leaf = {
        node: left,
        begin: parent.begin,
        end: w,
        depth,
        sumG: gl,
        sumH: hl,
        hist: null,
        gain: 0,
        feature: -1,
        bin: 0,
      };
      const c: Leaf = {
        node: right,
        begin: w,
        end: parent.end,
        depth,
        sumG: parent.sumG - gl,
        sumH: parent.sumH - hl,
        hist: null,
        gain: 0,
        feature: -1,
        bin: 0,
      };
      const canSplit = (x: Leaf) => depth < params.maxDepth && x.end - x.begin >= 2 * params.minLeaf;
      const [small, large] = a.end - a.begin <= c.end - c.begin ? [a, c] : [c, a];
      if (canSplit(small) || canSplit(large)) {
        small.hist = buildHistogram(grad, hess, small.begin, small.end);
        if (canSplit(large)) {
          for (let k = 0; k < hist.length; k++) hist[k]! -= small.hist[k]!;
          large.hist = hist;
        } else pool.push(hist);
        if (!canSplit(small)) {
          pool.push(small.hist);
          small.hist = null;
        }
      } else pool.push(hist);
      parent.hist = null;
      findSplit(a);
      findSplit(c);
      leaves.splice(pick, 1, a, c);
    }

    const leafBegin: number[] = [];
    const leafEnd: number[] = [];
    const leafNode: number[] = [];
    for (const leaf of leaves) {
      v[leaf.node] = (-leaf.sumG / (leaf.sumH + params.lambda)) * params.rate;
      leafBegin.push(leaf.begin);
      leafEnd.push(leaf.end);
      leafNode.push(leaf.node);
      if (leaf.hist) pool.push(leaf.hist);
      leaf.hist = null;
    }
    return {
      tree: { f, t, l, r, v },
      flat: {
        feature: Int32Array.from(f),
        splitBin: Int32Array.from(splitBins),
        left: Int32Array.from(l),
        right: Int32Array.from(r),
        value: Float64Array.from(v),
      },
      rows: partition.subarray(0, n),
      leafBegin,
      leafEnd,
      leafNode,
    };
  };

  return { grow, nBins };
};

/** Adds the tree's leaf value to output k of each of `rows`, reading their bins (bin 0, missing, goes left). */
export const addTree = (
  g: GrownTree,
  binned: BinnedFeatures,
  rows: Int32Array,
  scores: Float64Array,
  K: number,
  k: number,
) => {
  const { feature, splitBin, left, right, value } = g.flat;
  const { bins, features: d } = binned;
  for (let q = 0; q < rows.length; q++) {
    const row = rows[q]!;
    const at = row * d;
    let i = 0;
    let f = feature[0]!;
    while (f >= 0) {
      i = bins[at + f]! <= splitBin[i]! ? left[i]! : right[i]!;
      f = feature[i]!;
    }
    scores[row * K + k]! += value[i]!;
  }
};
