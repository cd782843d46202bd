import { z } from 'zod';
import { EMPTY_ROOT, hashChildren, HASH_SIZE, type Hash } from './hashing';

/** Called for every perfect subtree an append completes: `level` ≥ 1, leaves [index·2^level, (index+1)·2^level). */
export type SubtreeListener = (level: number, index: number, hash: Hash) => void;

/** What a frontier is persisted as (JSON): the tree size and the roots of its perfect subtrees, left to right. */
type FrontierSnapshot = { readonly v: 1; readonly size: string; readonly nodes: readonly string[] };

const snapshotSchema = z.object({
  v: z.literal(1),
  size: z.string().regex(/^(0|[1-9][0-9]*)$/, 'a decimal tree size'),
  nodes: z.array(z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex SHA-256 hash')),
});

const bitCount = (n: number): number => {
  let count = 0;
  for (let rest = n; rest > 0; rest = Math.floor(rest / 2)) count += rest % 2;
  return count;
};

/**
 * An RFC 6962 tree kept as its compact range from leaf 0: one root per perfect subtree, at most
 * log2(n) + 1 hashes. Appending costs one leaf plus, amortised, one interior hash; the root at the
 * current size costs at most log2(n) hashes. Sizes are plain numbers: exact up to 2^53 leaves, and
 * the arithmetic avoids 32-bit bitwise operators for that reason.
 */
export class MerkleFrontier {
  /** nodes[level]: the root of the perfect subtree of 2^level leaves, present iff bit `level` of size is set. */
  private readonly nodes: (Hash | undefined)[];
  private count: number;

  private constructor(count: number, nodes: (Hash | undefined)[]) {
    this.count = count;
    this.nodes = nodes;
  }

  static empty(): MerkleFrontier {
    return new MerkleFrontier(0, []);
  }

  get size(): number {
    return this.count;
  }

  /** Appends one leaf hash; reports each perfect subtree the append completes. */
  append(leafHash: Hash, onSubtree?: SubtreeListener): void {
    if (leafHash.length !== HASH_SIZE)
      throw new Error(`A leaf hash has ${HASH_SIZE} bytes, not ${leafHash.length}`);
    let hash = leafHash;
    let level = 0;
    let rest = this.count;
    let divisor = 1;
    while (rest % 2 === 1) {
      hash = hashChildren(this.nodes[level]!, hash);
      this.nodes[level] = undefined;
      level++;
      divisor *= 2;
      rest = (rest - 1) / 2;
      onSubtree?.(level, Math.floor(this.count / divisor), hash);
    }
    this.nodes[level] = hash;
    this.count++;
  }

  /** The tree head at the current size (SHA-256 of nothing for the empty tree). */
  root(): Hash {
    let root: Hash | undefined;
    for (const node of this.nodes) {
      if (node === undefined) continue;
      root = root === undefined ? node : hashChildren(node, root);
    }
    return root ?? EMPTY_ROOT;
  }

  clone(): MerkleFrontier {
    return new MerkleFrontier(this.count, [...this.nodes]);
  }

  snapshot(): FrontierSnapshot {
    const nodes: string[] = [];
    for (let level = this.nodes.length - 1; level >= 0; level--) {
      const node = this.nodes[level];
      if (node) nodes.push(node.toString('hex'));
    }
    return { v: 1, size: String(this.count), nodes };
  }

  /** Restores a persisted frontier; refuses one whose node count does not fit its size. */
  static restore(snapshot: unknown): MerkleFrontier {
    const parsed = snapshotSchema.parse(snapshot);
    const size = Number(parsed.size);
    if (!Number.isSafeInteger(size)) throw new Error(`Frontier size ${parsed.size} exceeds 2^53`);
    if (parsed.nodes.length !== bitCount(size))
      throw new Error(`A frontier of size ${size} holds ${bitCount(size)} nodes, not ${parsed.nodes.length}`);
    const nodes: (Hash | undefined)[] = [];
    let next = 0;
    // Snapshot nodes run from the highest level down: walk the size's bits from the top.
    const levels: number[] = [];
    for (let rest = size, level = 0; rest > 0; rest = Math.floor(rest / 2), level++)
      if (rest % 2 === 1) levels.push(level);
    for (const level of levels.reverse()) nodes[level] = Buffer.from(parsed.nodes[next++]!, 'hex');
    return new MerkleFrontier(size, nodes);
  }
}
