import { balancedAccuracy, calibrationError, expectedCalibrationError } from '../../src/engines/ml/metrics';
import { makePredictor } from '../../src/engines/ml/predict';
import { shuffledIndices } from '../../src/engines/ml/random';
import { trainModel } from '../../src/engines/ml/trainModel';
import { readSharedCsv } from '../support/data';

/** The split: a seeded (42) 80% to train, the other 20% answered without their class. */
const heldOut = async (file: string) => {
  const rows = await readSharedCsv(file);
  const order = shuffledIndices(rows.length, 42);
  const cut = Math.floor(rows.length * 0.8);
  return {
    train: order.slice(0, cut).map((i) => rows[i]!),
    test: order.slice(cut).map((i) => rows[i]!),
  };
};

describe('classification round 3 (issue 59, item 4): phoneme at 80/20, seed 42', () => {
  /*
   * Measured: balanced accuracy 0.8915 (the schema-2 engine before this round: 0.8862), expected
   * calibration error of probability_class 0.011. With other model seeds on the same split: 0.903,
   * 0.896, 0.904. Quality thresholds, not timings.
   */
  it('given phoneme, when trained on 80% and asked the rest, then balanced accuracy ≥ 0.89 and ECE ≤ 0.05', async () => {
    const { train, test } = await heldOut('openml_phoneme.csv');
    const artifact = trainModel(train, 'Class');
    const answers = makePredictor(artifact).predict(test.map(({ Class: _c, ...r }) => r));
    const truth = test.map((r) => Number(r.Class));

    // The forest (scored on the dev rows out of bag) beat the boosting and the majority on dev.
    expect(artifact).toMatchObject({ task: 'classification', mixer: { kind: 'gbdt', outputs: 1 } });
    expect(Object.keys(artifact.training.candidates).sort()).toEqual(['forest', 'gbdt', 'majority']);
    const { forest, gbdt } = artifact.training.candidates;
    expect(forest).toBeGreaterThan(gbdt!);
    expect(artifact.training.rounds).toBe(200);

    const balanced = balancedAccuracy(
      truth,
      answers.map((a) => a.Class as number),
    );
    expect(balanced).toBeGreaterThanOrEqual(0.89);

    const probabilities = answers.flatMap((a) => {
      const explain = JSON.parse(a.Class_explain as string) as Record<string, number>;
      return artifact.classes.map((c) => explain[`probability_class_${c}`]!);
    });
    const truthIndex = truth.map((t) => artifact.classes.indexOf(String(t)));
    expect(expectedCalibrationError(probabilities, truthIndex, artifact.classes.length)).toBeLessThanOrEqual(
      0.05,
    );
    // Each answer's probabilities are a distribution.
    for (let r = 0; r < answers.length; r++) {
      const sum = probabilities[r * 2]! + probabilities[r * 2 + 1]!;
      expect(Math.abs(sum - 1)).toBeLessThan(2e-4);
    }
  });
});

describe('the pieces round 3 is built from', () => {
  it('the calibration error is 0 for honest confidences and names an overconfident model', () => {
    // Ten rows at 0.7, seven right: honest. The same rows at 0.95: off by 0.25.
    const right = Array.from({ length: 10 }, (_, i) => i < 7);
    expect(calibrationError(new Array<number>(10).fill(0.7), right)).toBeCloseTo(0, 12);
    expect(calibrationError(new Array<number>(10).fill(0.95), right)).toBeCloseTo(0.25, 12);
    // Probabilities: the top class is the one judged (row 1's top is class 0, wrong).
    expect(expectedCalibrationError([0.2, 0.8, 0.6, 0.4], [1, 1], 2)).toBeCloseTo((0.2 + 0.6) / 2, 12);
  });
});
