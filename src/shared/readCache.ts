/**
 * Memoises read-model answers until the projections move on. Hot GETs (project lists) then cost a
 * map lookup instead of a DuckDB query, and can never be staler than the tables themselves.
 */
export const readCache = (currentVersion: () => number, maxEntries = 500) => {
  let version = -1;
  const entries = new Map<string, Promise<unknown>>();
  return <T>(key: string, compute: () => Promise<T>): Promise<T> => {
    const v = currentVersion();
    if (v !== version) {
      entries.clear();
      version = v;
    }
    let hit = entries.get(key) as Promise<T> | undefined;
    if (!hit) {
      hit = compute();
      if (entries.size >= maxEntries) entries.clear();
      entries.set(key, hit);
      hit.catch(() => entries.get(key) === hit && entries.delete(key));
    }
    return hit;
  };
};
export type ReadCache = ReturnType<typeof readCache>;
