import fc from 'fast-check';
import { serializeArtifact } from '../../src/engines/ml/artifact';
import type { Row } from '../../src/engines/ml/dataset';
import { makePredictor } from '../../src/engines/ml/predict';
import { trainModel } from '../../src/engines/ml/train';
import { planted, plantedClasses } from './synthetic';
import { propertyRuns, propertySeed } from '../support/seed';

/** Cells as they arrive from SQL or JSON: numbers, numeric text, blanks, unseen categories, junk. */
const cell = fc.oneof(
  fc.double({ min: -50, max: 50, noNaN: true }),
  fc.integer({ min: -5, max: 2000 }).map(String),
  fc.constantFrom(null, undefined, '', 'up', 'down', 'red', 'never-seen', '640,56', true, 1e300),
);
const row = fc.record(
  { noise_a: cell, signal: cell, weak: cell, noise_b: cell, y: cell },
  { requiredKeys: [] },
);

describe('engine invariants', () => {
  const regression = makePredictor(trainModel(planted(1200), 'y', { seed: 3 }));
  const classes = makePredictor(trainModel(plantedClasses(1200), 'y', { seed: 3 }));

  it.each([
    ['regression', regression],
    ['classification', classes],
  ])(
    '%s: a row gets the same answer alone as inside any batch (SQL JOINs predict in batches)',
    (_l, predictor) => {
      fc.assert(
        fc.property(fc.array(row, { minLength: 1, maxLength: 25 }), (rows: Row[]) => {
          const batch = predictor.predict(rows);
          rows.forEach((r, i) => expect(predictor.predict([r])[0]).toEqual(batch[i]));
          // Every answer has the output columns, in order, and only those.
          for (const answer of batch) expect(Object.keys(answer)).toEqual(predictor.outputColumns);
        }),
        { seed: propertySeed(), numRuns: propertyRuns(60) },
      );
    },
  );

  it('training is a function of data and seed: generated small tables train to identical bytes twice', () => {
    const table = fc.array(
      fc.record({
        a: fc.integer({ min: 0, max: 50 }),
        b: fc.constantFrom('x', 'y', 'z', null),
        c: fc.double({ min: -1, max: 1, noNaN: true }),
        t: fc.integer({ min: 0, max: 3 }),
      }),
      { minLength: 40, maxLength: 120 },
    );
    fc.assert(
      fc.property(table, fc.integer({ min: 0, max: 1000 }), (rows, seed) => {
        const again = (target: string) =>
          serializeArtifact(trainModel(rows, target, { seed, maxRounds: 20 }));
        expect(again('c')).toBe(again('c'));
        expect(again('t')).toBe(again('t'));
      }),
      { seed: propertySeed(), numRuns: propertyRuns(8) },
    );
  });
});
