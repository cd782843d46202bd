import crypto from 'node:crypto';

/**
 * RFC 6962 §2.1 (RFC 9162 §2.1.1) hashing with SHA-256: a leaf is SHA-256(0x00 || leaf), an
 * interior node SHA-256(0x01 || left || right). The two prefixes keep a leaf from ever being
 * mistaken for an interior node (second-preimage resistance).
 */
export const HASH_SIZE = 32;

export type Hash = Buffer;

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Hash = crypto.hash('sha256', Buffer.alloc(0), 'buffer');

/** SHA-256(0x00 || bytes). */
export const hashLeaf = (bytes: Uint8Array): Hash => {
  const input = Buffer.allocUnsafe(bytes.length + 1);
  input[0] = 0;
  input.set(bytes, 1);
  return crypto.hash('sha256', input, 'buffer');
};

/**
 * SHA-256(0x00 || UTF-8(text)). U+0000 encodes as the single byte 0x00, so prefixing the string
 * hashes exactly the RFC's input without copying the encoded text into another buffer.
 */
export const hashLeafText = (text: string): Hash => crypto.hash('sha256', '\u0000' + text, 'buffer');

// One scratch buffer for interior nodes: crypto.hash reads it synchronously, so reuse is safe and
// saves an allocation per node (there are as many interior nodes as leaves).
const node = Buffer.alloc(1 + 2 * HASH_SIZE);
node[0] = 1;

/** SHA-256(0x01 || left || right). */
export const hashChildren = (left: Uint8Array, right: Uint8Array): Hash => {
  node.set(left, 1);
  node.set(right, 1 + HASH_SIZE);
  return crypto.hash('sha256', node, 'buffer');
};

/** The largest power of two strictly smaller than n (n ≥ 2): RFC 6962's split point. */
export const splitPoint = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

/** Constant-time equality for hashes (the root of a tree an attacker controls need not leak timing). */
export const sameHash = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && crypto.timingSafeEqual(a, b);

/** k when n = 2^k (n ≥ 1), else null; exact for every safe integer. */
export const exponentOfTwo = (n: number): number | null => {
  if (!Number.isSafeInteger(n) || n < 1) return null;
  let k = 0;
  let rest = n;
  while (rest % 2 === 0) {
    rest /= 2;
    k++;
  }
  return rest === 1 ? k : null;
};
