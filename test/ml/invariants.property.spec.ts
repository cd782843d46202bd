/**
 * The engine's invariants: a row gets the same answer alone as inside any batch, and training is
 * a function of its data and seed. Beside each, a kill check: missing inputs filled from the
 * batch's own mean (not from training), and rows read in an order of their own before training,
 * are caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import type { Predictor } from '../../src/engines/ml/answers';
import { serializeArtifact } from '../../src/engines/ml/artifact';
import type { Row } from '../../src/engines/ml/dataset';
import { makePredictor } from '../../src/engines/ml/predict';
import { trainModel } from '../../src/engines/ml/trainModel';
import { planted, plantedClasses } from './synthetic';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

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

const INPUTS = ['noise_a', 'signal', 'weak', 'noise_b'];

/** Missing numeric inputs filled with the batch's own mean of the column (the kill check's bug). */
const filledFromTheBatch = (predictor: Predictor): Predictor => ({
  ...predictor,
  predict: (rows, options) => {
    const means = INPUTS.map((column) => {
      const present = rows.map((r) => r[column]).filter((v): v is number => typeof v === 'number');
      return present.length ? present.reduce((a, b) => a + b, 0) / present.length : undefined;
    });
    const filled = rows.map((r) => {
      const copy = { ...r };
      INPUTS.forEach((column, i) => {
        if ((copy[column] ?? null) === null && means[i] !== undefined) copy[column] = means[i];
      });
      return copy;
    });
    return predictor.predict(filled, options);
  },
});

/** A row's answer alone equals its answer in the batch, for `predictor`. */
const sameAloneAsInBatch = (predictor: Predictor, rows: Row[]) => {
  const batch = predictor.predict(rows);
  rows.forEach((r, i) => expect(predictor.predict([r])[0]).toEqual(batch[i]));
  // Every answer has the output columns, in order, and only those.
  for (const answer of batch) expect(Object.keys(answer)).toEqual(predictor.outputColumns);
};

type Train = (
  rows: Row[],
  target: string,
  options: Parameters<typeof trainModel>[2],
) => ReturnType<typeof trainModel>;

/** Training on the rows in an order of its own (a read without ORDER BY): each call rotated anew (the kill check's bug). */
const rowsInOwnOrder = (): Train => {
  let calls = 0;
  return (rows, target, options) => {
    const shift = ++calls % rows.length;
    return trainModel([...rows.slice(shift), ...rows.slice(0, shift)], target, options);
  };
};

const table = fc.array(
  fc.record({
    a: fc.integer({ min: 0, max: 50 }),
    b: fc.constantFrom('x', 'y', 'z', null),
    c: fc.double({ min: -1, max: 1, noNaN: true }),
    t: fc.integer({ min: 0, max: 3 }),
  }),
  { minLength: 40, maxLength: 120 },
);

/** Trained twice from the same rows and seed, `train` gives the same bytes. */
const trainsToSameBytes = (train: Train, rows: Row[], seed: number) => {
  const again = (target: string) => serializeArtifact(train(rows, target, { seed, maxRounds: 20 }));
  expect(again('c')).toBe(again('c'));
  expect(again('t')).toBe(again('t'));
};

describe('engine invariants', () => {
  const regression = makePredictor(trainModel(planted(1200), 'y', { seed: 3 }));
  const classes = makePredictor(trainModel(plantedClasses(1200), 'y', { seed: 3 }));
  const batches = fc.array(row, { minLength: 1, maxLength: 25 });

  it.each([
    ['regression', regression],
    ['classification', classes],
  ])(
    '%s: a row gets the same answer alone as inside any batch (SQL JOINs predict in batches)',
    (_l, predictor) => {
      fc.assert(
        fc.property(batches, (rows: Row[]) => sameAloneAsInBatch(predictor, rows)),
        { seed: propertySeed(), numRuns: propertyRuns(60) },
      );
    },
  );

  it('kill check: missing inputs filled from the batch’s own mean are caught', () => {
    expectCaught(
      fc.property(batches, (rows: Row[]) => sameAloneAsInBatch(filledFromTheBatch(regression), rows)),
      { seed: propertySeed(), numRuns: propertyRuns(60) },
    );
  });

  it('training is a function of data and seed: generated small tables train to identical bytes twice', () => {
    fc.assert(
      fc.property(table, fc.integer({ min: 0, max: 1000 }), (rows, seed) =>
        trainsToSameBytes(trainModel, rows, seed),
      ),
      { seed: propertySeed(), numRuns: propertyRuns(8) },
    );
  });

  it('kill check: rows read in an order of their own before training are caught', () => {
    expectCaught(
      fc.property(table, fc.integer({ min: 0, max: 1000 }), (rows, seed) =>
        trainsToSameBytes(rowsInOwnOrder(), rows, seed),
      ),
      { seed: propertySeed(), numRuns: propertyRuns(8) },
    );
  });
});
