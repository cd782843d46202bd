/**
 * Permutation feature importance (Lightwood's PermutationFeatureImportance): shuffle one input
 * column's values across held-out rows, and see how much the accuracy metric drops. Seeded, so the
 * same training gives the same importances.
 */
import type { FeatureImportance } from './artifact';
import { shuffledOrder } from './random';

/**
 * `X` holds `n` held-out rows of `d` features (row-major); `blocks` gives, per input column, its
 * first feature and width; `score` rates features (higher is better).
 */
export const permutationImportance = (
  blocks: readonly { column: string; start: number; width: number }[],
  X: Float64Array,
  n: number,
  d: number,
  score: (X: Float64Array) => number,
  seed: number,
): FeatureImportance[] => {
  const base = score(X);
  const shuffled = new Float64Array(X.length);
  const drops = blocks.map((b, j) => {
    shuffled.set(X);
    const order = shuffledOrder(n, (seed + 7919 * (j + 1)) >>> 0);
    for (let r = 0; r < n; r++)
      for (let w = 0; w < b.width; w++) shuffled[r * d + b.start + w] = X[order[r]! * d + b.start + w]!;
    return Math.max(0, base - score(shuffled));
  });
  const largest = Math.max(0, ...drops);
  return blocks.map((b, j) => ({
    column: b.column,
    importance: largest > 0 ? drops[j]! / largest : 0,
    drop: drops[j]!,
  }));
};
