const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` until it answers something other than `undefined`, and returns that; throws naming
 * `what` after `ms`. For what a spec cannot await directly (work the service finishes after it
 * answered, a chatbot's poll of its channel).
 */
export const until = async <T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 10_000,
  everyMs = 200,
): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await pause(everyMs);
  }
};

export type UntilTrueOptions = {
  /** How long to wait (10 s unless said). */
  readonly ms?: number;
  readonly everyMs?: number;
  /** What the state was left in, said when the wait fails (so a failure in CI says why, not only that). */
  readonly explain?: () => Promise<string>;
};

/**
 * Waits until `check` answers true. A check that throws counts as not yet (a service restarting
 * refuses connections; a page is between two renders); the last thing it threw is in the failure,
 * with `what` and what `explain` says.
 */
export const untilTrue = async (
  what: string,
  check: () => Promise<boolean>,
  { ms = 10_000, everyMs = 100, explain }: UntilTrueOptions = {},
): Promise<void> => {
  const end = Date.now() + ms;
  let thrown: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      thrown = error;
    }
    if (Date.now() > end) {
      const state = explain ? await explain().catch((e: Error) => `(explain failed: ${e.message})`) : '';
      const last =
        thrown === undefined ? '' : ` (the last check threw: ${(thrown as Error).message ?? String(thrown)})`;
      throw new Error(`timed out after ${ms} ms waiting for ${what}${state ? `: ${state}` : ''}${last}`);
    }
    await pause(everyMs);
  }
};
