import fc from 'fast-check';
import { inferColumnType } from '../../src/engines/ml/columnTypes';
import { inferType } from '../../src/engines/ml/dataset';
import { makePredictor } from '../../src/engines/ml/predict';
import { seededRandom } from '../../src/engines/ml/random';
import { planTarget } from '../../src/engines/ml/target';
import { trainModel, TrainingError } from '../../src/engines/ml/trainModel';

/** Rows with one informative input `x` and a target made from it by `target`. */
const rowsWith = (n: number, target: (x: number, i: number) => unknown) => {
  const random = seededRandom(5);
  return Array.from({ length: n }, (_, i) => {
    const x = Math.round(random() * 1000) / 100;
    return { x, noise: Math.round(random() * 100), y: target(x, i) };
  });
};

describe('the target type', () => {
  describe('is inferred from the values', () => {
    it.each([
      ['integers with two values', [1, 2, 2, 1, 2], 'classification', 'binary'],
      ['numeric strings with two values', ['1', '2', '2', '1', ' 2'], 'classification', 'binary'],
      ['zeros and ones', [0, 1, 1, 0], 'classification', 'binary'],
      ['booleans', [true, false, true], 'classification', 'binary'],
      ['words', ['low', 'mid', 'high', 'mid'], 'classification', 'categorical'],
      ['two floats', [0.5, 1.5, 0.5], 'classification', 'binary'],
      ['many distinct floats', [0.5, 1.25, 3.5, 2.75, 9.5], 'regression', 'float'],
    ])('%s → %s (%s)', (_label, values, task, dtype) => {
      expect(planTarget(values)).toMatchObject({ task, dtype, source: 'inferred' });
    });

    it('a few distinct integers are classes when every class has rows enough (Lightwood: fewer than 10)', () => {
      const rooms = Array.from({ length: 400 }, (_, i) => i % 4);
      expect(planTarget(rooms)).toMatchObject({ task: 'classification', dtype: 'categorical' });
      // The same four values in 40 rows are more likely a small numeric sample.
      expect(planTarget(rooms.slice(0, 40))).toMatchObject({ task: 'regression', dtype: 'integer' });
      // Ten or more distinct integers stay numbers.
      expect(planTarget(Array.from({ length: 400 }, (_, i) => i % 10))).toMatchObject({ task: 'regression' });
    });

    it('a typed column reads NaN as missing', () => {
      expect(planTarget(Float64Array.from([1, 2, NaN, 2, 1]))).toMatchObject({ task: 'classification' });
      expect(planTarget(Float64Array.from([NaN, NaN]))).toBeNull();
    });
  });

  describe('can be forced with target_type', () => {
    it('numeric makes a regression of two-valued integers', () => {
      expect(planTarget([1, 2, 2, 1], 'numeric')).toMatchObject({
        task: 'regression',
        dtype: 'integer',
        source: 'option',
      });
    });

    it('categorical makes classes of many integers', () => {
      expect(planTarget([3, 17, 42, 8, 99], 'categorical')).toMatchObject({
        task: 'classification',
        dtype: 'categorical',
        source: 'option',
      });
    });

    it('numeric on words is refused with a message naming the way out', () => {
      expect(() =>
        trainModel(
          rowsWith(50, (x) => (x > 5 ? 'big' : 'small')),
          'y',
          { target_type: 'numeric' },
        ),
      ).toThrow(
        new TrainingError(
          'target_type = numeric, but the target column does not hold numbers: use target_type = categorical',
        ),
      );
    });

    it('an unknown target_type is refused naming the option', () => {
      expect(() =>
        trainModel(
          rowsWith(50, (x) => x),
          'y',
          { target_type: 'banana' as 'numeric' },
        ),
      ).toThrow(/Invalid training option target_type/);
    });
  });

  describe('end to end', () => {
    it('a target of integers 1/2 is trained as classes, answered as numbers with probabilities', () => {
      // Given rows whose integer target is 2 when x > 5 and 1 otherwise
      const rows = rowsWith(600, (x) => (x > 5 ? 2 : 1));
      // When the engine trains without being told the type
      const artifact = trainModel(rows, 'y', { seed: 3 });
      // Then it learns classes and records how it decided
      expect(artifact).toMatchObject({
        task: 'classification',
        targetType: 'categorical',
        targetTypeSource: 'inferred',
        targetDtype: 'binary',
        // Most frequent first: x is uniform over 0–10, so 1 (x ≤ 5) is slightly more common.
        classes: ['1', '2'],
        classValues: 'number',
      });
      // And answers a class, typed as the data was, with a probability per class
      const [low, high] = makePredictor(artifact).predict([{ x: 1.5 }, { x: 9.1, y: 2 }]);
      expect(low!.y).toBe(1);
      expect(high!.y).toBe(2);
      expect(high!.y_original).toBe(2);
      const explain = JSON.parse(high!.y_explain as string) as Record<string, number>;
      // MindsDB's keys first, in its order (the row lacks `noise`, said after them: issue 59).
      expect(Object.keys(explain).slice(0, 6)).toEqual([
        'predicted_value',
        'confidence',
        'anomaly',
        'truth',
        'probability_class_1',
        'probability_class_2',
      ]);
      expect(explain).toHaveProperty('missing_inputs', ['noise']);
      expect(explain.probability_class_2!).toBeGreaterThan(0.9);
      expect(explain.probability_class_2! + explain.probability_class_1!).toBeCloseTo(1, 3);
    });

    it('the same target with target_type = numeric is a regression answering numbers between the classes', () => {
      const rows = rowsWith(600, (x) => (x > 5 ? 2 : 1));
      const artifact = trainModel(rows, 'y', { seed: 3, target_type: 'numeric' });
      expect(artifact).toMatchObject({
        task: 'regression',
        targetType: 'numeric',
        targetTypeSource: 'option',
      });
      const [answer] = makePredictor(artifact).predict([{ x: 5.0 }]);
      expect(typeof answer!.y).toBe('number');
      expect(answer).toHaveProperty('y_min');
    });

    it('booleans come back as booleans', () => {
      const artifact = trainModel(
        rowsWith(400, (x) => x > 3),
        'y',
        { seed: 3 },
      );
      expect(artifact).toMatchObject({ task: 'classification', classValues: 'boolean' });
      const [answer] = makePredictor(artifact).predict([{ x: 8 }]);
      expect(answer!.y).toBe(true);
    });
  });
});

describe('column type inference on cells', () => {
  const cell = fc.oneof(
    fc.constantFrom(null, undefined, '', '  ', 'NaN', 'yes', 'no', 'a b c d e', '640,56'),
    fc.integer({ min: -5, max: 5 }),
    fc.integer({ min: 0, max: 1 }).map(String),
    fc.double({ min: -100, max: 100, noNaN: true }).map((v) => String(v)),
    fc.constantFrom('2022-01-05', '2023-12-31 10:00', '2021-02-30'),
    fc.boolean(),
    fc.string({ maxLength: 6 }),
  );
  // Columns mostly of one kind with a few others mixed in, around the 2% tolerance.
  const column = fc
    .tuple(fc.array(cell, { minLength: 1, maxLength: 5 }), fc.array(cell, { maxLength: 3 }), fc.nat(120))
    .map(([kind, odd, size]) => [...Array.from({ length: size }, (_, i) => kind[i % kind.length]), ...odd]);

  it('decides exactly as inferType does (early exits change nothing)', () => {
    fc.assert(
      fc.property(column, (values) => {
        expect(inferColumnType(values)).toBe(inferType(values));
      }),
      { seed: 20240611, numRuns: 400 },
    );
  });
});
