import fc from 'fast-check';
import { catches, expectCaught, expectCaughtByOne } from '../support/seed';

/** The kill checks' own check (test/support/seed.ts): it must fail when the bug is not caught. */
describe('a kill check', () => {
  const settings = { seed: 42, numRuns: 20 };

  it('given a property that finds its bug, then the kill check passes, sync and async', async () => {
    expect(() =>
      expectCaught(
        fc.property(fc.nat(), (n) => n < 0),
        settings,
      ),
    ).not.toThrow();
    await expect(
      expectCaught(
        fc.asyncProperty(fc.nat(), async (n) => n < 0),
        settings,
      ),
    ).resolves.toBeUndefined();
  });

  it('given a property that never fails, then the kill check fails, naming its runs and seed', async () => {
    expect(() =>
      expectCaught(
        fc.property(fc.nat(), (n) => n >= 0),
        settings,
      ),
    ).toThrow("the kill check's bug was not caught in 20 runs (seed 42)");
    await expect(
      expectCaught(
        fc.asyncProperty(fc.nat(), async (n) => n >= 0),
        settings,
      ),
    ).rejects.toThrow("the kill check's bug was not caught in 20 runs (seed 42)");
  });

  it('given a bug caught on the first run, then fast-check stops there (nothing is shrunk)', () => {
    let runs = 0;
    expectCaught(
      fc.property(fc.nat(), () => {
        runs++;
        return false;
      }),
      settings,
    );
    expect(runs).toBe(1);
  });

  it('given several properties, when one of them finds the bug, then the kill check passes; when none does, it fails', async () => {
    const holds = fc.asyncProperty(fc.nat(), async (n) => n >= 0);
    const finds = fc.asyncProperty(fc.nat(), async (n) => n < 0);
    await expect(
      expectCaughtByOne([catches(holds, settings), catches(finds, settings)]),
    ).resolves.toBeUndefined();
    await expect(expectCaughtByOne([catches(holds, settings), catches(holds, settings)])).rejects.toThrow(
      "the kill check's bug was not caught by any of its 2 properties",
    );
  });
});
