/**
 * Raw outputs of a schema-2 mixer on row-major features: the value for numbers, K logits per row
 * for classes (a two-class GBDT learns one logit, read as [0, s]).
 */
import type { Mixer } from './artifact';
import { compileGbdt, compiledScores } from './gbdt';
import { linearScore } from './linear';

export type Scorer = (X: Float64Array, n: number, d: number) => Float64Array;

/** A GBDT's raw scores as the mixer's outputs: K per row (two classes learn one logit). */
export const gbdtOutputs = (raw: Float64Array, n: number, K: number, outputs: number) => {
  if (outputs === K) return raw;
  const out = new Float64Array(n * K);
  for (let r = 0; r < n; r++) out[r * K + 1] = raw[r]!;
  return out;
};

export const makeScorer = (mixer: Mixer, classes: number): Scorer => {
  const K = classes === 0 ? 1 : classes;
  switch (mixer.kind) {
    case 'gbdt': {
      const compiled = compileGbdt(mixer);
      return (X, n, d) => gbdtOutputs(compiledScores(compiled, X, n, d), n, K, mixer.outputs);
    }
    case 'linear':
      return (X, n, d) => {
        const out = new Float64Array(n);
        for (let r = 0; r < n; r++) out[r] = linearScore(mixer, X, r * d);
        return out;
      };
    case 'mean':
      return (_X, n) => new Float64Array(n).fill(mixer.value);
    case 'majority': {
      const logits = mixer.probabilities.map((p) => Math.log(Math.max(p, 1e-12)));
      return (_X, n) => {
        const out = new Float64Array(n * K);
        for (let r = 0; r < n; r++) out.set(logits, r * K);
        return out;
      };
    }
  }
};

/** Row-major features of rows `idx` from feature columns. */
export const rowMajor = (features: readonly Float64Array[], idx: ArrayLike<number>) => {
  const d = features.length;
  const X = new Float64Array(idx.length * d);
  for (let f = 0; f < d; f++) {
    const column = features[f]!;
    for (let r = 0; r < idx.length; r++) X[r * d + f] = column[idx[r]!]!;
  }
  return X;
};
