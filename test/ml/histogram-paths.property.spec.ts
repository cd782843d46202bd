/**
 * Property (a fresh seed each run, bounded runs): training's faster paths give the same model.
 *
 * - Histograms: when every feature can split, a tree's histograms are summed eight features at a
 *   time with no list of features (histogramTree.ts); with a feature that cannot split (one value),
 *   the splittable features are summed from their list. Growing on generated bins with a constant
 *   feature added last takes the second path on the same splittable features, so the two trees
 *   must be equal, node for node and leaf value for leaf value (to the bit). The kill check: a
 *   histogram that loses one row of the leaf it sums (here, growing without the window's last row)
 *   is caught by the same comparison.
 * - The split (train.ts): train and dev rows are put in ascending order by marking them rather than
 *   by sorting; they must be exactly the sorted slices of the seeded shuffle, and the three parts
 *   every row once. The kill check: a split that leaves the dev rows in shuffled order is caught.
 */
import fc from 'fast-check';
import type { BinnedFeatures } from '../../src/engines/ml/binning';
import { makeTreeGrower } from '../../src/engines/ml/histogramTree';
import { shuffledOrder } from '../../src/engines/ml/random';
import { splitRows } from '../../src/engines/ml/train';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();

type Case = { d: number; n: number; bins: number[]; grad: number[]; maxBin: number };

/** Rows of byte bins (few values, so splits tie and bins repeat) and their gradients. */
const aCase: fc.Arbitrary<Case> = fc
  .record({
    d: fc.integer({ min: 1, max: 11 }),
    n: fc.integer({ min: 8, max: 120 }),
    maxBin: fc.integer({ min: 2, max: 9 }),
  })
  .chain(({ d, n, maxBin }) =>
    fc.record({
      d: fc.constant(d),
      n: fc.constant(n),
      maxBin: fc.constant(maxBin),
      bins: fc.array(fc.integer({ min: 0, max: maxBin }), { minLength: n * d, maxLength: n * d }),
      grad: fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: n, maxLength: n }),
    }),
  );

/** The case's bins with `extra` constant features (bin 1, a single value: they cannot split) after them. */
const binnedOf = ({ d, n, bins, maxBin }: Case, extra: number): BinnedFeatures => {
  const width = d + extra;
  const out = new Uint8Array(n * width);
  for (let i = 0; i < n; i++)
    for (let f = 0; f < width; f++) out[i * width + f] = f < d ? bins[i * d + f]! : 1;
  // Cuts 1..maxBin−1 give bins up to maxBin + 1; a constant feature has no cut (two bins: missing, its value).
  const cuts = Array.from({ length: width }, (_, f) =>
    f < d ? Float64Array.from({ length: maxBin }, (_, b) => b + 0.5) : new Float64Array(0),
  );
  return { bins: out, features: width, rows: n, cuts };
};

const grownTree = (c: Case, extra: number, rows = c.n) => {
  const grower = makeTreeGrower(binnedOf(c, extra), c.n, {
    maxLeaves: 8,
    maxDepth: 4,
    minLeaf: 2,
    minHess: 0,
    lambda: 1,
    rate: 0.1,
  });
  const hess = new Float64Array(c.n).fill(1);
  return grower.grow(
    Int32Array.from({ length: rows }, (_, i) => i),
    Float64Array.from(c.grad),
    hess,
  ).tree;
};

const sameTrees = (other: (c: Case) => ReturnType<typeof grownTree>) =>
  fc.property(aCase, (c) => {
    expect(other(c)).toEqual(grownTree(c, 0));
  });

/** splitRows as it was: the shuffle's train and dev slices sorted. */
const sortedSplit = (n: number, seed: number, sortDev = true) => {
  const order = shuffledOrder(n, seed);
  const nDev = Math.max(1, Math.floor(n * 0.1));
  const nCal = Math.max(1, Math.floor(n * 0.1));
  const dev = order.slice(n - nDev - nCal, n - nCal);
  return {
    train: order.slice(0, n - nDev - nCal).sort(),
    dev: sortDev ? dev.sort() : dev,
    cal: order.slice(n - nCal),
  };
};

const sameSplit = (split: (n: number, seed: number) => ReturnType<typeof sortedSplit>) =>
  fc.property(fc.integer({ min: 10, max: 3000 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }), (n, seed) => {
    const got = split(n, seed);
    expect(got).toEqual(sortedSplit(n, seed));
    const seen = new Uint8Array(n);
    for (const part of [got.train, got.dev, got.cal]) for (const i of part) seen[i]!++;
    expect(seen.every((s) => s === 1)).toBe(true);
  });

describe('training paths that must not change the model (property, fresh seed each run)', () => {
  it('a tree grown when every feature can split equals one grown from the list of splittable features', () => {
    fc.assert(
      sameTrees((c) => grownTree(c, 1)),
      { seed: SEED, numRuns: propertyRuns(200) },
    );
  });

  it('the split puts train and dev rows in ascending order, as sorting did, and each row in one part', () => {
    fc.assert(sameSplit(splitRows), { seed: SEED, numRuns: propertyRuns(100) });
  });

  describe('kill checks', () => {
    it('the tree comparison catches a histogram that loses a row', () => {
      const outcome = fc.check(
        sameTrees((c) => grownTree(c, 1, c.n - 1)),
        { seed: SEED, numRuns: propertyRuns(200) },
      );
      expect(outcome.failed).toBe(true);
    });

    it('the split comparison catches dev rows left in shuffled order', () => {
      const outcome = fc.check(
        sameSplit((n, seed) => sortedSplit(n, seed, false)),
        { seed: SEED, numRuns: propertyRuns(100) },
      );
      expect(outcome.failed).toBe(true);
    });
  });
});
