import { exponentOfTwo, hashChildren, HASH_SIZE, sameHash, type Hash } from './hashing';

const isSize = (n: number) => Number.isSafeInteger(n) && n >= 0;
const allHashes = (hashes: readonly Uint8Array[]) => hashes.every((h) => h.length === HASH_SIZE);
const odd = (n: number) => n % 2 === 1;
const half = (n: number) => Math.floor(n / 2);

/**
 * RFC 9162 §2.1.3.2, step by step: recomputes the root from a leaf hash and its inclusion path and
 * compares it with `root`. Numbers, not 32-bit bitwise operators: exact for sizes up to 2^53.
 */
export const verifyInclusion = (
  leafHash: Uint8Array,
  leafIndex: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean => {
  if (!isSize(leafIndex) || !isSize(treeSize) || leafIndex >= treeSize) return false;
  if (leafHash.length !== HASH_SIZE || root.length !== HASH_SIZE || !allHashes(proof)) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r: Hash = Buffer.from(leafHash);
  for (const p of proof) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      r = hashChildren(p, r);
      if (!odd(fn))
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
    } else {
      r = hashChildren(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && sameHash(r, root);
};

/**
 * RFC 9162 §2.1.4.2 for 0 < size1 < size2. The RFC defines proofs only there; at the edges this
 * follows transparency-dev/merkle: size1 = size2 is consistent iff the proof is empty and the roots
 * are equal, and a proof from the empty tree (size1 = 0) is refused as meaningless.
 */
export const verifyConsistency = (
  size1: number,
  size2: number,
  root1: Uint8Array,
  root2: Uint8Array,
  proof: readonly Uint8Array[],
): boolean => {
  if (!isSize(size1) || !isSize(size2) || size1 > size2 || size1 === 0) return false;
  if (root1.length !== HASH_SIZE || root2.length !== HASH_SIZE || !allHashes(proof)) return false;
  if (size1 === size2) return proof.length === 0 && sameHash(root1, root2);
  // 1. An empty path fails.
  if (proof.length === 0) return false;
  // 2. When size1 is a power of two, the old root is the first node of the path.
  const path = exponentOfTwo(size1) !== null ? [root1, ...proof] : [...proof];
  // 3., 4.
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  // 5.
  let fr: Hash = Buffer.from(path[0]!);
  let sr: Hash = Buffer.from(path[0]!);
  // 6.
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      if (!odd(fn))
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  // 7.
  return sameHash(fr, root1) && sameHash(sr, root2) && sn === 0;
};
