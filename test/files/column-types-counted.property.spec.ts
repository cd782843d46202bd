/**
 * An upload's CSV is counted in the pass that checks its column types
 * (`countAndInferColumnTypes`, src/files/columnTypes.ts): the sample's size and what it rules out go
 * by an estimate of the rows made before they are counted, and what the estimate ruled out is checked
 * against the counted rows. The promise: whatever the estimate (short, long, far off), the answer is
 * the counted rows and the one-pass types (every candidate checked on every cell). Beside it, a kill
 * check: types ruled out by the estimate and never checked against the count are caught.
 */
import fc from 'fast-check';
import {
  countAndInferColumnTypes,
  inferColumnTypes,
  stillPossible,
  type Sampling,
} from '../../src/files/columnTypes';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';
import { csvScratch, csvWorld, type CsvWorld } from './csv-worlds';

const SEED = propertySeed();
const RUNS = propertyRuns(60);

/** Worlds whose strays are in their first rows: what a short estimate's small sample sees. */
const earlyStrays = csvWorld.map((w) => ({
  ...w,
  columns: w.columns.map((col) => ({ ...col, strays: col.strays.map((s) => ({ ...s, at: s.at % 8 })) })),
}));

/** A world and an estimate of its rows: a share of them, from far short to three times over. */
const estimated = fc.record({
  world: fc.oneof(csvWorld, earlyStrays),
  estimate: fc.oneof(
    fc.double({ min: 0.01, max: 0.5, noNaN: true }),
    fc.double({ min: 0.5, max: 3, noNaN: true }),
  ),
});

describe('CSV rows counted in the pass that checks the column types', () => {
  const scratch = csvScratch('column-types-counted-');

  /** Where the counted answer differs from the rows and the one-pass answer, or null. */
  const difference = async (w: CsvWorld, estimate: number, possible: () => Sampling['possible']) => {
    const from = scratch.write(w);
    const c = scratch.connection();
    const names = w.columns.map((_, i) => `c${i}`);
    const onePass = await inferColumnTypes(c, from, names, w.rows, {
      minRows: Infinity,
      share: 1,
      possible: stillPossible,
    });
    const rowsAbout = Math.max(1, Math.round(w.rows * estimate));
    const counted = await countAndInferColumnTypes(c, from, names, rowsAbout, {
      minRows: 1,
      share: w.share,
      possible: possible(),
    });
    const expected = { rowCount: w.rows, columns: onePass };
    return JSON.stringify(counted) === JSON.stringify(expected)
      ? null
      : `expected ${JSON.stringify(expected)}, counted ${JSON.stringify(counted)} (estimate ${rowsAbout})`;
  };

  it('gives the counted rows and the one-pass types, whatever the estimate', async () => {
    await fc.assert(
      fc.asyncProperty(estimated, async ({ world, estimate }) => {
        expect(await difference(world, estimate, () => stillPossible)).toBeNull();
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('kill check: types ruled out by the estimate and not checked against the count are caught', async () => {
    // The bug: the estimate's bound kept for the check after counting (the first bound it is given).
    const unchecked = (): Sampling['possible'] => {
      let bound: number | undefined;
      return (part, rows) => stillPossible(part, (bound ??= rows));
    };
    await expectCaught(
      fc.asyncProperty(
        estimated,
        async ({ world, estimate }) => (await difference(world, estimate, unchecked)) === null,
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
