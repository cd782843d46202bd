/**
 * Values that hold while the read model stays at one version. The tables change only when the
 * projection runner applies a batch (its version moves), so until then a value computed from them
 * is still right; the first use after the version moves finds the cache empty. Bounded: the
 * oldest entry goes first.
 */
export class VersionedCache<T> {
  private version = -1;
  private readonly entries = new Map<string, T>();

  constructor(
    private readonly currentVersion: () => number,
    private readonly maxEntries = 500,
  ) {}

  private sync() {
    const v = this.currentVersion();
    if (v !== this.version) {
      this.entries.clear();
      this.version = v;
    }
  }

  get(key: string): T | undefined {
    this.sync();
    return this.entries.get(key);
  }

  /** Keeps `value`, unless the version moved on since `computedAt` (it may be stale then). */
  set(key: string, value: T, computedAt = this.currentVersion()) {
    this.sync();
    if (computedAt !== this.version) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, value);
  }

  delete(key: string) {
    this.entries.delete(key);
  }
}
