/**
 * Property (a fresh seed each run, bounded runs): the neighbour search of rows lacking inputs
 * (partial.ts), which visits rows outwards from the row's key on one ranked column and stops early,
 * returns exactly what comparing the row with every reference row gives: the first k rows in
 * (distance, index) order. So the faster search changes no prediction and no interval. Keys are
 * drawn from a few values (and NaN) so that equal distances, where a search would most likely
 * differ, are common. Beside it, the kill check: a search that settles ties towards the higher
 * index (what scanning the rows from the last one would do) is caught by the same property.
 */
import fc from 'fast-check';
import { nearestOnKeys } from '../../src/engines/ml/partial';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();

type Case = {
  weights: Float64Array;
  ranked: Uint8Array;
  refKeys: Float64Array;
  rows: number;
  keys: Float64Array;
  known: Uint8Array;
  k: number;
};

const aCase: fc.Arbitrary<Case> = fc.integer({ min: 1, max: 5 }).chain((C) =>
  fc
    .record({
      weights: fc.array(fc.constantFrom(0.01, 0.25, 0.5, 1), { minLength: C, maxLength: C }),
      ranked: fc.array(fc.boolean(), { minLength: C, maxLength: C }),
      reference: fc.array(
        fc.array(fc.constantFrom(0, 0.25, 0.5, 0.75, 1, 2, NaN), { minLength: C, maxLength: C }),
        {
          minLength: 1,
          maxLength: 60,
        },
      ),
      row: fc.array(fc.constantFrom(0, 0.25, 0.5, 0.6, 1, 2, NaN), { minLength: C, maxLength: C }),
      known: fc.array(fc.boolean(), { minLength: C, maxLength: C }),
      k: fc.integer({ min: 1, max: 16 }),
    })
    .map(({ weights, ranked, reference, row, known, k }) => ({
      weights: Float64Array.from(weights),
      ranked: Uint8Array.from(ranked, Number),
      refKeys: Float64Array.from(reference.flat()),
      rows: reference.length,
      keys: Float64Array.from(row),
      known: Uint8Array.from(known, Number),
      k: Math.min(k, reference.length),
    })),
);

/** The reference answer: every row's distance, summed column by column, sorted by (distance, index). */
const byFullComparison = (c: Case, tiesToHigherIndex = false) => {
  const C = c.weights.length;
  const distance = (i: number) => {
    let s = 0;
    for (let j = 0; j < C; j++) {
      const a = c.keys[j]!;
      if (!c.known[j] || Number.isNaN(a)) continue;
      const b = c.refKeys[i * C + j]!;
      if (Number.isNaN(b)) s += c.weights[j]!;
      else if (c.ranked[j]) s += c.weights[j]! * (a - b) * (a - b);
      else if (a !== b) s += c.weights[j]!;
    }
    return s;
  };
  const d = Array.from({ length: c.rows }, (_, i) => distance(i));
  return Array.from({ length: c.rows }, (_, i) => i)
    .sort((x, y) => d[x]! - d[y]! || (tiesToHigherIndex ? y - x : x - y))
    .slice(0, c.k);
};

const agrees = (search: (c: Case) => number[]) =>
  fc.property(aCase, (c) => {
    expect(search(c)).toEqual(byFullComparison(c));
  });

const sortedSearch = (c: Case) =>
  Array.from(
    nearestOnKeys({ weights: c.weights, ranked: c.ranked }, c.refKeys, c.rows, c.keys, 0, c.known, c.k),
  );

describe('the neighbour search of rows lacking inputs (property, fresh seed each run)', () => {
  it('returns the first k rows in (distance, index) order, as comparing every row does', () => {
    fc.assert(agrees(sortedSearch), { seed: SEED, numRuns: propertyRuns(400) });
  });

  describe('kill check', () => {
    it('the property catches a search that settles ties towards the higher index', () => {
      const outcome = fc.check(
        agrees((c) => byFullComparison(c, true)),
        { seed: SEED, numRuns: propertyRuns(400) },
      );
      expect(outcome.failed).toBe(true);
    });
  });
});
