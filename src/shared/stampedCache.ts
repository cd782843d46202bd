/**
 * Values each kept with the stamp of what it was read from (the tables it read, as
 * src/projection/readVersions.ts stamps them): a value is given while that stamp is still the
 * current one, and dropped at the first look after it moved. A change to tables a value did not
 * read leaves it in place. Bounded: the oldest entry goes first.
 */
export class StampedCache<T> {
  private readonly entries = new Map<string, StampedEntry<T>>();

  constructor(
    /** The current stamp of what `reads` names. */
    private readonly stampOf: (reads: readonly string[]) => string,
    private readonly maxEntries = 500,
  ) {}

  /** The entry under `key`, while what it read is as it was. */
  entry(key: string): StampedEntry<T> | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.stamp === this.stampOf(entry.reads)) return entry;
    this.entries.delete(key);
    return undefined;
  }

  get(key: string): T | undefined {
    return this.entry(key)?.value;
  }

  /**
   * Keeps `value`, read from `reads`, unless they moved since it began to be read: `stampsThen`
   * gives the stamps as they were then (a value read across a change may be either side's).
   */
  set(key: string, value: T, reads: readonly string[], stampsThen: (reads: readonly string[]) => string) {
    const stamp = stampsThen(reads);
    if (stamp !== this.stampOf(reads)) return;
    if (!this.entries.has(key) && this.entries.size >= this.maxEntries)
      this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, reads, stamp });
  }
}

type StampedEntry<T> = {
  readonly value: T;
  readonly reads: readonly string[];
  readonly stamp: string;
};
