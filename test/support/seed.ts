import crypto from 'node:crypto';
import fc from 'fast-check';

/**
 * The seed and the number of runs of a spec file's fast-check properties.
 *
 * `npm test` draws a fresh seed for each spec file on each run and prints it, so every run tries cases
 * the last one did not and what the properties cover grows run after run; a failure names its seed
 * (here and in fast-check's report), and PROMISE_SEED=<seed> repeats it. PROMISE_RUNS sets every
 * property's runs; PROMISE_SCALE multiplies them (`npm run test:deep` runs ten times as many).
 */
const fromEnv = (name: string) => {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value))
    throw new Error(`${name} must be an integer, not ${JSON.stringify(text)}`);
  return value;
};

/** One seed per spec file: jest gives every spec file its own copy of this module. */
let drawn: number | undefined;

/**
 * The seed of this spec file's properties: PROMISE_SEED when set, else `fixed` when given (a spec kept
 * on one seed says why where it passes it), else a fresh one. Printed once per spec file.
 */
export const propertySeed = (fixed?: number): number => {
  if (drawn !== undefined) return drawn;
  const repeated = fromEnv('PROMISE_SEED');
  drawn = repeated ?? fixed ?? crypto.randomInt(2 ** 31 - 1);
  const how = repeated !== undefined ? 'PROMISE_SEED' : fixed !== undefined ? 'fixed' : 'fresh';
  console.log(`property seed ${drawn} (${how}; repeat with PROMISE_SEED=${drawn})`);
  return drawn;
};

/** A property's runs: PROMISE_RUNS when set, else `runs` times PROMISE_SCALE (1 unless set). */
export const propertyRuns = (runs: number): number => {
  const fixed = fromEnv('PROMISE_RUNS');
  if (fixed !== undefined) return fixed;
  const scale = Number(process.env.PROMISE_SCALE ?? 1);
  if (!(scale > 0))
    throw new Error(`PROMISE_SCALE must be a positive number, not ${process.env.PROMISE_SCALE}`);
  return Math.max(1, Math.round(runs * scale));
};

/** The kill check's verdict on fast-check's report. */
const caught = <Ts>(found: fc.RunDetails<Ts>, seed: number) => {
  if (!found.failed)
    throw new Error(
      `the kill check's bug was not caught in ${found.numRuns} runs (seed ${seed}): the property no longer finds what it exists to find`,
    );
};

/**
 * A kill check: `property`, built over a known bug (a defence switched off, a mutant), must fail at
 * the count `npm test` runs, on this spec file's seed, so a lower count is shown to still find what
 * the property exists to find. fast-check stops at the first failure: the bug is known, nothing is
 * shrunk. A synchronous property is checked synchronously, an asynchronous one is awaited.
 */
export function expectCaught<Ts>(
  property: fc.IAsyncProperty<Ts>,
  settings: { readonly seed: number; readonly numRuns: number },
): Promise<void>;
export function expectCaught<Ts>(
  property: fc.IProperty<Ts>,
  settings: { readonly seed: number; readonly numRuns: number },
): void;
export function expectCaught<Ts>(
  property: fc.IAsyncProperty<Ts> | fc.IProperty<Ts>,
  settings: { readonly seed: number; readonly numRuns: number },
): Promise<void> | void {
  const parameters = { seed: settings.seed, numRuns: settings.numRuns, endOnFailure: true };
  if (property.isAsync())
    return fc
      .check(property as fc.IAsyncProperty<Ts>, parameters)
      .then((found) => caught(found, settings.seed));
  caught(fc.check(property as fc.IProperty<Ts>, parameters), settings.seed);
}

/** One property of `expectCaughtByOne`: whether it fails at the count, on the seed (stopping there). */
export const catches =
  <Ts>(property: fc.IAsyncProperty<Ts>, settings: { readonly seed: number; readonly numRuns: number }) =>
  async (): Promise<boolean> =>
    (await fc.check(property, { seed: settings.seed, numRuns: settings.numRuns, endOnFailure: true })).failed;

/**
 * A kill check whose bug shows on one path of several (one route's bodies, the SQL door): the
 * properties are run in order until one fails; the check fails when none does.
 */
export const expectCaughtByOne = async (checks: readonly (() => Promise<boolean>)[]): Promise<void> => {
  for (const check of checks) if (await check()) return;
  throw new Error(
    `the kill check's bug was not caught by any of its ${checks.length} properties at the count npm test runs`,
  );
};
