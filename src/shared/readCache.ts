import { VersionedCache } from './versionedCache';

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
  /** `bypass`: this call chain must not be answered from (or fill) the cache (reads as of the past). */
  options: { holdsConnection?: () => boolean; bypass?: () => boolean; maxEntries?: number } = {},
) => {
  const cache = new VersionedCache<{ value: Promise<unknown>; settled: boolean }>(
    currentVersion,
    options.maxEntries ?? 500,
  );
  return <T>(key: string, compute: () => Promise<T>): Promise<T> => {
    if (options.bypass?.()) return compute();
    const version = currentVersion();
    const hit = cache.get(key);
    if (hit && (hit.settled || !options.holdsConnection?.())) return hit.value as Promise<T>;
    const value = compute();
    const entry = { value: value as Promise<unknown>, settled: false };
    if (!hit) cache.set(key, entry, version);
    value.then(
      () => (entry.settled = true),
      () => cache.get(key) === entry && cache.delete(key),
    );
    return value;
  };
};
export type ReadCache = ReturnType<typeof readCache>;

/** One read cache per table, each kept while its table stays at one version. */
export const tableReadCaches = (
  tableVersion: (table: string) => number,
  options: { holdsConnection?: () => boolean; bypass?: () => boolean } = {},
) => {
  const caches = new Map<string, ReadCache>();
  return (table: string): ReadCache => {
    let cache = caches.get(table);
    if (!cache) caches.set(table, (cache = readCache(() => tableVersion(table), options)));
    return cache;
  };
};
