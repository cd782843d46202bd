/**
 * A regression's explanation string is written field by field (src/engines/ml/answers.ts,
 * `regressionExplain`); it must be exactly what the general `pythonJson` (Python's json.dumps
 * layout, as MindsDB answers) writes for the same six fields, for every number JSON can and
 * cannot spell. Beside it, a kill check: a field writer that spells numbers as JavaScript prints
 * them (`NaN`, `Infinity`, where JSON writes null) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { pythonJson, regressionExplain } from '../../src/engines/ml/answers';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const NUM_RUNS = Number(process.env.PROMISE_RUNS ?? 300);

const number = fc.oneof(
  fc.double(),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, 2 ** 62),
  fc.integer().map((n) => n / 10_000),
);

type Explain = typeof regressionExplain;

/** The six fields written one by one, each number as `String` prints it (the kill check's bug). */
const printedAsJavaScript: Explain = (predicted, confidence, anomaly, truth, lower, upper) =>
  `{"predicted_value": ${predicted}, "confidence": ${confidence}, "anomaly": ${anomaly}, "truth": ${truth}, "confidence_lower_bound": ${lower}, "confidence_upper_bound": ${upper}}`;

/** The property over the six fields, for the writer `explain`. */
const writesAsPythonJson = (explain: Explain) =>
  fc.property(
    number,
    number,
    fc.constantFrom(true, false, null),
    fc.option(number, { nil: null }),
    number,
    number,
    (predicted, confidence, anomaly, truth, lower, upper) => {
      expect(explain(predicted, confidence, anomaly, truth, lower, upper)).toBe(
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
  );

describe("a regression's explanation", () => {
  it('is what pythonJson writes for the same fields', () => {
    fc.assert(writesAsPythonJson(regressionExplain), { seed: SEED, numRuns: propertyRuns(NUM_RUNS) });
  });

  it('kill check: numbers spelled as JavaScript prints them (NaN, Infinity) are caught', () => {
    expectCaught(writesAsPythonJson(printedAsJavaScript), { seed: SEED, numRuns: propertyRuns(NUM_RUNS) });
  });
});
