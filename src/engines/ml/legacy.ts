/**
 * The schema-1 prediction path, kept as it was when those artifacts were written: they live in
 * event logs forever and must predict exactly as they did. Do not change this file's arithmetic.
 */
import type { Mixer } from './artifact';
import { gbdtScores, softmaxRow } from './gbdt';
import { linearScore } from './linear';

/** Predictions of a mixer for rows `idx` (regression: values; classification: probabilities). */
export const mixerOutputs = (
  mixer: Mixer,
  X: Float64Array,
  d: number,
  idx: ArrayLike<number>,
  classes: number,
) => {
  const K = classes === 0 ? 1 : classes;
  const out = new Float64Array(idx.length * K);
  if (mixer.kind === 'gbdt') {
    const rows = new Float64Array(idx.length * d);
    for (let j = 0; j < idx.length; j++) rows.set(X.subarray(idx[j]! * d, idx[j]! * d + d), j * d);
    out.set(gbdtScores(mixer, rows, idx.length, d));
    if (classes !== 0) for (let j = 0; j < idx.length; j++) softmaxRow(out, out, j * K, K);
  } else if (mixer.kind === 'linear') {
    for (let j = 0; j < idx.length; j++) out[j] = linearScore(mixer, X, idx[j]! * d);
  } else if (mixer.kind === 'mean') out.fill(mixer.value);
  else for (let j = 0; j < idx.length; j++) out.set(mixer.probabilities, j * K);
  return out;
};
