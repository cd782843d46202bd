/**
 * A random forest of histogram trees, for small classification sets (issue 59: forests reach
 * about 0.90 balanced accuracy on phoneme, where boosting stayed near 0.88). Each tree grows deep
 * on a bootstrap sample of the train and dev rows, each split drawing √d of the features; a tree
 * of output k regresses the indicator of class k (squared error: the Gini criterion for 0/1), so
 * its leaves hold class shares and the forest's output is their mean over trees. Histogram trees
 * make this cheap: no pairwise work, as ml-random-forest's O(n²) training had.
 *
 * The forest is stored as a GbdtModel: the base is each class's share and every tree's leaf holds
 * (leaf share − base) / trees, so the ensemble's sum is the mean of the trees. Its outputs are
 * shares, not logits; the probability scaling fitted on them (calibrate.ts) is Platt scaling.
 * Rows a tree did not draw score it out of bag: every train and dev row gets a held-out output,
 * so the forest learns from the dev rows too and is still scored and calibrated on held-out outputs.
 */
import { prepareBoosting, type Objective } from './boost';
import type { GbdtModel, Tree } from './gbdt';
import { addTree, makeTreeGrower } from './histogramTree';
import { seededRandom } from './random';

/**
 * The forest is a candidate up to this many train + dev rows (phoneme's 4,323, not bank's 36,168,
 * where boosting learns from 29,000 rows and the forest's deep trees would cost seconds).
 */
export const MAX_FOREST_ROWS = 20_000;

export type ForestOptions = {
  trees: number;
  seed: number;
  /** Minimum rows in a leaf: bounds the trees' size (artifact bytes, prediction walks). */
  minLeaf: number;
};

/**
 * 200 trees grown to single rows, as Breiman's forests are: on phoneme (80/20, seeds 42, 1, 2, 3)
 * leaves of 5 rows or 100 trees lost 0.005–0.01 of held-out balanced accuracy. About 4 MB of
 * artifact for 4,000 rows of five features.
 */
export const FOREST_OPTIONS = { trees: 200, minLeaf: 1 } as const;

export type TrainedForest = {
  model: GbdtModel;
  /** Per row of `rows` (ascending), its outputs from the trees that did not draw it. */
  outOfBag: Float64Array;
};

/**
 * Trains the forest on `rows` (train ∪ dev, ascending). Unweighted: the shares stay the observed
 * ones and the decision (calibrate.ts) balances the classes; class-weighted trees lost about 0.005
 * of held-out balanced accuracy on phoneme.
 */
export const trainForest = (
  features: readonly Float64Array[],
  y: Float64Array,
  rows: Int32Array,
  objective: Objective,
  options: ForestOptions,
): TrainedForest => {
  const input = prepareBoosting(features, y, null, rows, new Int32Array(0), objective, options.seed);
  const n = input.train.length;
  const K = objective.kind === 'softmax' ? objective.classes : 1;
  // Output k's target: class k's indicator (two classes: the second class's, as boosting's logit).
  const target = (i: number, k: number) => (input.y[i] === (K === 1 ? 1 : k) ? 1 : 0);
  const base = Array.from({ length: K }, (_, k) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += target(i, k);
    return sum / n;
  });
  const random = seededRandom(options.seed ^ 0x27d4eb2f);
  const grower = makeTreeGrower(input.binned, n, {
    maxLeaves: n,
    maxDepth: 64,
    minLeaf: options.minLeaf,
    minHess: 0,
    lambda: 1e-9,
    rate: 1 / options.trees,
    featuresPerSplit: Math.max(1, Math.round(Math.sqrt(features.length))),
    random,
  });
  const grad = new Float64Array(n);
  const hess = new Float64Array(n).fill(1);
  const drawn = new Int32Array(n);
  const inBag = new Uint8Array(n);
  const oobSums = new Float64Array(n * K);
  const oobTrees = new Int32Array(n);
  const trees: Tree[][] = [];
  for (let t = 0; t < options.trees; t++) {
    inBag.fill(0);
    for (let q = 0; q < n; q++) {
      const i = Math.floor(random() * n);
      drawn[q] = i;
      inBag[i] = 1;
    }
    drawn.sort();
    const outside = Int32Array.from({ length: n }, (_, i) => i).filter((i) => inBag[i] === 0);
    for (const i of outside) oobTrees[i]!++;
    const round: Tree[] = [];
    for (let k = 0; k < K; k++) {
      for (let i = 0; i < n; i++) grad[i] = base[k]! - target(i, k);
      const grown = grower.grow(drawn, grad, hess);
      round.push(grown.tree);
      addTree(grown, input.binned, outside, oobSums, K, k);
    }
    trees.push(round);
  }
  // Out of bag: base + the mean of the trees that did not draw the row (their values carry 1/trees).
  const outOfBag = new Float64Array(n * K);
  for (let i = 0; i < n; i++)
    for (let k = 0; k < K; k++)
      outOfBag[i * K + k] =
        base[k]! + (oobTrees[i]! > 0 ? (oobSums[i * K + k]! * options.trees) / oobTrees[i]! : 0);
  return { model: { kind: 'gbdt', outputs: K, base, trees }, outOfBag };
};
