/**
 * Memoises read-model answers until the projections move on. Hot GETs (project lists) then cost a
 * map lookup instead of a DuckDB query, and can never be staler than the tables themselves.
 *
 * A caller that holds a pooled read connection never waits for an answer another caller is still
 * computing: that computation may itself be waiting for a pooled connection, and with every
 * connection held by such callers nobody would ever move (it hung the service under mixed load).
 * Such a caller computes the answer itself, on the connection it holds.
 */
export const readCache = (
  currentVersion: () => number,
  options: { holdsConnection?: () => boolean; maxEntries?: number } = {},
) => {
  const maxEntries = options.maxEntries ?? 500;
  let version = -1;
  const entries = new Map<string, { value: Promise<unknown>; settled: boolean }>();
  return <T>(key: string, compute: () => Promise<T>): Promise<T> => {
    const v = currentVersion();
    if (v !== version) {
      entries.clear();
      version = v;
    }
    const hit = entries.get(key);
    if (hit && (hit.settled || !options.holdsConnection?.())) return hit.value as Promise<T>;
    const value = compute();
    const entry = { value: value as Promise<unknown>, settled: false };
    if (entries.size >= maxEntries) entries.clear();
    if (!hit) entries.set(key, entry);
    value.then(
      () => (entry.settled = true),
      () => entries.get(key) === entry && entries.delete(key),
    );
    return value;
  };
};
export type ReadCache = ReturnType<typeof readCache>;
