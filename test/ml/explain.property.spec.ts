/**
 * A regression's explanation string is written field by field (src/engines/ml/answers.ts,
 * `regressionExplain`); it must be exactly what the general `pythonJson` (Python's json.dumps
 * layout, as MindsDB answers) writes for the same six fields, for every number JSON can and
 * cannot spell.
 */
import fc from 'fast-check';
import { pythonJson, regressionExplain } from '../../src/engines/ml/answers';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const NUM_RUNS = Number(process.env.PROMISE_RUNS ?? 300);

const number = fc.oneof(
  fc.double(),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, 2 ** 62),
  fc.integer().map((n) => n / 10_000),
);

describe("a regression's explanation", () => {
  it('is what pythonJson writes for the same fields', () => {
    fc.assert(
      fc.property(
        number,
        number,
        fc.constantFrom(true, false, null),
        fc.option(number, { nil: null }),
        number,
        number,
        (predicted, confidence, anomaly, truth, lower, upper) => {
          expect(regressionExplain(predicted, confidence, anomaly, truth, lower, upper)).toBe(
            pythonJson({
              predicted_value: predicted,
              confidence,
              anomaly,
              truth,
              confidence_lower_bound: lower,
              confidence_upper_bound: upper,
            }),
          );
        },
      ),
      { seed: SEED, numRuns: propertyRuns(NUM_RUNS) },
    );
  });
});
