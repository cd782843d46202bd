/**
 * A large CSV's column types are read from a sample first (src/files/columnTypes.ts): the sample
 * only rules types out that cannot fit the whole file, so the promise is that the answer equals the
 * one-pass answer (every candidate checked on every cell) for any file. Property over generated
 * files whose columns are mostly one kind with a few stray cells (where the 2 % tolerance decides),
 * sampled at generated shares; beside it, a kill check: a sample that rules a type out at its first
 * failing cell is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { inferColumnTypes, stillPossible, type Sampling } from '../../src/files/columnTypes';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';
import { csvScratch, csvWorld as world, type CsvWorld as World } from './csv-worlds';

const SEED = propertySeed();
const RUNS = propertyRuns(60);

describe('CSV column types read from a sample first', () => {
  const scratch = csvScratch('column-types-');

  /** Where the sampled answer differs from the one-pass answer, or null. */
  const difference = async (w: World, possible: Sampling['possible']) => {
    const from = scratch.write(w);
    const c = scratch.connection();
    const names = w.columns.map((_, i) => `c${i}`);
    const onePass = await inferColumnTypes(c, from, names, w.rows, { minRows: Infinity, share: 1, possible });
    const sampled = await inferColumnTypes(c, from, names, w.rows, { minRows: 1, share: w.share, possible });
    return JSON.stringify(onePass) === JSON.stringify(sampled)
      ? null
      : `one pass ${JSON.stringify(onePass)}, sampled ${JSON.stringify(sampled)}`;
  };

  it('gives the one-pass answer for any file and sample share', async () => {
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        expect(await difference(w, stillPossible)).toBeNull();
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('kill check: a sample that rules a type out at its first failing cell is caught', async () => {
    const hasty: Sampling['possible'] = (part, rows) =>
      stillPossible(part, rows).filter((t) => (part.holds.get(t) ?? 0) === part.nonEmpty);
    await expectCaught(
      fc.asyncProperty(world, async (w) => (await difference(w, hasty)) === null),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
