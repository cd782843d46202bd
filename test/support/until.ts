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
    await new Promise((r) => setTimeout(r, everyMs));
  }
};
