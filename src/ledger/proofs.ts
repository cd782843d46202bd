import { EMPTY_ROOT, exponentOfTwo, hashChildren, splitPoint, type Hash } from './hashing';
import { MemorySubtreeRoots, type LeafHashes, type SubtreeRoots } from './leafStore';

type ProofBuilderOptions = {
  /** Cache (or persistent store) of perfect-subtree roots; an in-memory one by default. */
  readonly subtrees?: SubtreeRoots;
  /**
   * Perfect subtrees of at least 2^cacheFromLevel leaves are cached; smaller ones are hashed from one
   * range read of their leaves (at most 2^cacheFromLevel − 1 hashes each). Default 10 (1,024 leaves).
   */
  readonly cacheFromLevel?: number;
};

/** Hashes 2^k leaf hashes bottom-up into their perfect subtree's root. */
const perfectRootOf = (leaves: readonly Hash[]): Hash => {
  let level: Hash[] = [...leaves];
  while (level.length > 1) {
    const next: Hash[] = new Array<Hash>(level.length / 2);
    for (let i = 0; i < next.length; i++) next[i] = hashChildren(level[2 * i]!, level[2 * i + 1]!);
    level = next;
  }
  return level[0]!;
};

/**
 * RFC 9162 §2.1.3.1 inclusion proofs and §2.1.4.1 consistency proofs over recorded leaf hashes. Every
 * hash in a proof is the root of a range of leaves that splits into O(log n) perfect subtrees; large
 * ones come from the subtree cache (computed once, then reused by every later proof), small ones from
 * one range read each. A proof at n = 1M then costs a few thousand hashes, not a pass over the log.
 */
export const createProofBuilder = (leaves: LeafHashes, options: ProofBuilderOptions = {}) => {
  const subtrees = options.subtrees ?? new MemorySubtreeRoots();
  const cacheFromLevel = options.cacheFromLevel ?? 10;

  const perfectRoot = async (level: number, index: number): Promise<Hash> => {
    if (level === 0) return leaves.get(index);
    if (level < cacheFromLevel) {
      const width = 2 ** level;
      return perfectRootOf(await leaves.range(index * width, (index + 1) * width));
    }
    const cached = await subtrees.get(level, index);
    if (cached) return cached;
    const root = hashChildren(
      await perfectRoot(level - 1, 2 * index),
      await perfectRoot(level - 1, 2 * index + 1),
    );
    await subtrees.set(level, index, root);
    return root;
  };

  /** MTH(D[from:to]) as RFC 6962 defines it: split at the largest power of two below the width. */
  const rangeRoot = async (from: number, to: number): Promise<Hash> => {
    const width = to - from;
    if (width === 0) return EMPTY_ROOT;
    const level = exponentOfTwo(width);
    if (level !== null && from % width === 0) return perfectRoot(level, from / width);
    const k = splitPoint(width);
    return hashChildren(await rangeRoot(from, from + k), await rangeRoot(from + k, to));
  };

  const requireSize = async (treeSize: number, what: string) => {
    if (!Number.isSafeInteger(treeSize) || treeSize < 0)
      throw new RangeError(`${what} ${treeSize} is not a tree size`);
    const recorded = await leaves.size();
    if (treeSize > recorded)
      throw new RangeError(`${what} ${treeSize} exceeds the ${recorded} recorded leaves`);
  };

  const hashAll = async (ranges: readonly (readonly [number, number])[]) => {
    const out: Hash[] = [];
    for (const [from, to] of ranges) out.push(await rangeRoot(from, to));
    return out;
  };

  return {
    /** The root of the tree of the first `treeSize` leaves. */
    rootAt: async (treeSize: number): Promise<Hash> => {
      await requireSize(treeSize, 'Tree size');
      return rangeRoot(0, treeSize);
    },

    /** PATH(leafIndex, D[0:treeSize]): sibling subtree roots from the leaf up to the root. */
    inclusionProof: async (leafIndex: number, treeSize: number): Promise<Hash[]> => {
      await requireSize(treeSize, 'Tree size');
      if (!Number.isSafeInteger(leafIndex) || leafIndex < 0 || leafIndex >= treeSize)
        throw new RangeError(`Leaf ${leafIndex} is not in a tree of size ${treeSize}`);
      const ranges: [number, number][] = [];
      // Walk from the root down, then reverse: the proof lists the deepest sibling first.
      let from = 0;
      let to = treeSize;
      while (to - from > 1) {
        const k = splitPoint(to - from);
        if (leafIndex < from + k) {
          ranges.push([from + k, to]);
          to = from + k;
        } else {
          ranges.push([from, from + k]);
          from += k;
        }
      }
      return hashAll(ranges.reverse());
    },

    /** PROOF(oldSize, D[0:newSize]) = SUBPROOF(oldSize, D[0:newSize], true), for 0 < oldSize ≤ newSize. */
    consistencyProof: async (oldSize: number, newSize: number): Promise<Hash[]> => {
      await requireSize(newSize, 'New size');
      if (!Number.isSafeInteger(oldSize) || oldSize < 1 || oldSize > newSize)
        throw new RangeError(`No consistency proof from size ${oldSize} to ${newSize} (needs 0 < old ≤ new)`);
      const ranges: [number, number][] = [];
      let m = oldSize;
      let from = 0;
      let to = newSize;
      let whole = true; // SUBPROOF's b: whether D[from:to]'s old prefix is the old tree itself
      while (m !== to - from) {
        const k = splitPoint(to - from);
        if (m <= k) {
          ranges.push([from + k, to]);
          to = from + k;
        } else {
          ranges.push([from, from + k]);
          from += k;
          m -= k;
          whole = false;
        }
      }
      if (!whole) ranges.push([from, to]);
      return hashAll(ranges.reverse());
    },
  };
};
