import { HASH_SIZE, type Hash } from './hashing';

type MaybePromise<T> = T | Promise<T>;

/**
 * Where recorded leaf hashes live (a DuckDB table, a file of 32-byte records, memory): proofs read
 * them, the verifier compares against them to name the exact event that changed. Index i is the
 * i-th leaf of the tree, in the order the sealer saw the events.
 */
export interface LeafHashes {
  /** How many leaf hashes are recorded. */
  size(): MaybePromise<number>;
  get(index: number): MaybePromise<Hash>;
  /** Leaf hashes [from, to), in order. */
  range(from: number, to: number): MaybePromise<readonly Hash[]>;
}

/**
 * Roots of perfect subtrees (level ≥ 1, leaves [index·2^level, (index+1)·2^level)). They never change
 * once the log holds their leaves, so any cache of them stays valid; the sealer reports each one it
 * completes, so a store can be filled as the log is sealed rather than on the first proof.
 */
export interface SubtreeRoots {
  get(level: number, index: number): MaybePromise<Hash | undefined>;
  set(level: number, index: number, hash: Hash): MaybePromise<void>;
}

/** Subtree roots in a Map: about 2n / 2^minLevel entries for n leaves when filled from `minLevel` up. */
export class MemorySubtreeRoots implements SubtreeRoots {
  private readonly roots = new Map<string, Hash>();
  get(level: number, index: number): Hash | undefined {
    return this.roots.get(`${level}/${index}`);
  }
  set(level: number, index: number, hash: Hash): void {
    this.roots.set(`${level}/${index}`, hash);
  }
  get count(): number {
    return this.roots.size;
  }
}

/** Leaf hashes in one growing buffer (32 bytes each): for tests, benchmarks and short-lived verifiers. */
export class MemoryLeafHashes implements LeafHashes {
  private buffer: Buffer;
  private count = 0;

  constructor(capacity = 1024) {
    this.buffer = Buffer.allocUnsafe(Math.max(1, capacity) * HASH_SIZE);
  }

  append(hash: Hash): void {
    if (hash.length !== HASH_SIZE) throw new Error(`A leaf hash has ${HASH_SIZE} bytes, not ${hash.length}`);
    if ((this.count + 1) * HASH_SIZE > this.buffer.length) {
      const grown = Buffer.allocUnsafe(this.buffer.length * 2);
      this.buffer.copy(grown, 0, 0, this.count * HASH_SIZE);
      this.buffer = grown;
    }
    hash.copy(this.buffer, this.count * HASH_SIZE);
    this.count++;
  }

  size(): number {
    return this.count;
  }

  get(index: number): Hash {
    if (!Number.isInteger(index) || index < 0 || index >= this.count)
      throw new RangeError(`No leaf ${index} (size ${this.count})`);
    return this.buffer.subarray(index * HASH_SIZE, (index + 1) * HASH_SIZE);
  }

  range(from: number, to: number): Hash[] {
    if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to > this.count || from > to)
      throw new RangeError(`No leaves [${from}, ${to}) (size ${this.count})`);
    const out: Hash[] = new Array<Hash>(to - from);
    for (let i = from; i < to; i++) out[i - from] = this.buffer.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE);
    return out;
  }
}
