import crypto from 'node:crypto';
import {
  createProofBuilder,
  EMPTY_ROOT,
  hashLeaf,
  MemoryLeafHashes,
  MemorySubtreeRoots,
  MerkleFrontier,
  verifyConsistency,
  verifyInclusion,
} from '../../src/ledger';

/*
 * Known answers from the Certificate Transparency reference code, as kept by transparency-dev:
 * github.com/transparency-dev/merkle, proof/verify_test.go at commit
 * 02194e9afb6c1d95b5381350007963aa70fff472 (`leaves`, `roots`, `inclusionProofs`,
 * `consistencyProofs`; its leaf numbers are 1-based, ours 0-based). The same vectors appear in
 * google/certificate-transparency's merkle tree tests.
 */
const leafInputs = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map((hex) => Buffer.from(hex, 'hex'));

const knownRoots = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

const knownInclusionProofs: { leafIndex: number; treeSize: number; proof: string[] }[] = [
  {
    leafIndex: 0,
    treeSize: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    leafIndex: 5,
    treeSize: 8,
    proof: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  { leafIndex: 2, treeSize: 3, proof: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    leafIndex: 1,
    treeSize: 5,
    proof: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];

const knownConsistencyProofs: { size1: number; size2: number; proof: string[] }[] = [
  {
    size1: 1,
    size2: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    size1: 6,
    size2: 8,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    size1: 2,
    size2: 5,
    proof: [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
  {
    size1: 6,
    size2: 7,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];

const hex = (hashes: readonly Buffer[]) => hashes.map((h) => h.toString('hex'));

/*
 * An independent, deliberately naive RFC 6962 implementation: the recursive definitions of
 * RFC 9162 §2.1.1 (MTH), §2.1.3.1 (PATH) and §2.1.4.1 (SUBPROOF) over arrays, with its own hashing.
 * Nothing here is shared with src/ledger.
 */
const naive = (() => {
  const sha = (...parts: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();
  const leafHashOf = (input: Buffer) => sha(Buffer.from([0]), input);
  const node = (l: Buffer, r: Buffer) => sha(Buffer.from([1]), l, r);
  const split = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1);
  // Every list hashed here is a contiguous run of one input array, so its first element and length
  // name it: remembering roots that way keeps thousands of naive proofs fast.
  const known = new Map<Buffer, Map<number, Buffer>>();
  const mth = (d: Buffer[]): Buffer => {
    if (d.length === 0) return sha();
    const memo = known.get(d[0]!) ?? new Map<number, Buffer>();
    known.set(d[0]!, memo);
    const remembered = memo.get(d.length);
    if (remembered) return remembered;
    const k = split(d.length);
    const root = d.length === 1 ? leafHashOf(d[0]!) : node(mth(d.slice(0, k)), mth(d.slice(k)));
    memo.set(d.length, root);
    return root;
  };
  const path = (m: number, d: Buffer[]): Buffer[] => {
    if (d.length === 1) return [];
    const k = split(d.length);
    return m < k
      ? [...path(m, d.slice(0, k)), mth(d.slice(k))]
      : [...path(m - k, d.slice(k)), mth(d.slice(0, k))];
  };
  const subproof = (m: number, d: Buffer[], b: boolean): Buffer[] => {
    if (m === d.length) return b ? [] : [mth(d)];
    const k = split(d.length);
    return m <= k
      ? [...subproof(m, d.slice(0, k), b), mth(d.slice(k))]
      : [...subproof(m - k, d.slice(k), false), mth(d.slice(0, k))];
  };
  /** Rebuilds the root from an inclusion path by the tree's shape, top-down (not the RFC's bit walk). */
  const rootFromPath = (m: number, n: number, leaf: Buffer, proof: Buffer[]): Buffer | null => {
    if (n === 1) return proof.length === 0 ? leaf : null;
    if (proof.length === 0) return null;
    const sibling = proof[proof.length - 1]!;
    const rest = proof.slice(0, -1);
    const k = split(n);
    if (m < k) {
      const left = rootFromPath(m, k, leaf, rest);
      return left && node(left, sibling);
    }
    const right = rootFromPath(m - k, n - k, leaf, rest);
    return right && node(sibling, right);
  };
  return { leafHashOf, mth, path, proof: (m: number, d: Buffer[]) => subproof(m, d, true), rootFromPath };
})();

const treeOf = (inputs: readonly Buffer[]) => {
  const leaves = new MemoryLeafHashes();
  for (const input of inputs) leaves.append(hashLeaf(input));
  return leaves;
};

describe('RFC 6962 tree hashing (CT reference vectors)', () => {
  it('given no leaves, then the root is SHA-256 of nothing', () => {
    expect(MerkleFrontier.empty().root().toString('hex')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(EMPTY_ROOT.toString('hex')).toBe(naive.mth([]).toString('hex'));
  });

  it('given the eight reference leaves appended one by one, then the root at every size is the known one', () => {
    const frontier = MerkleFrontier.empty();
    const roots = leafInputs.map((input) => {
      frontier.append(hashLeaf(input));
      return frontier.root().toString('hex');
    });
    expect(roots).toEqual(knownRoots);
  });

  it('given the reference tree, when proofs are built from its leaf hashes, then they are the known audit paths', async () => {
    const builder = createProofBuilder(treeOf(leafInputs));
    for (const { leafIndex, treeSize, proof } of knownInclusionProofs)
      expect(hex(await builder.inclusionProof(leafIndex, treeSize))).toEqual(proof);
    for (const { size1, size2, proof } of knownConsistencyProofs)
      expect(hex(await builder.consistencyProof(size1, size2))).toEqual(proof);
  });

  it('given the known proofs, then the RFC 9162 verifiers accept them against the known roots', () => {
    for (const { leafIndex, treeSize, proof } of knownInclusionProofs) {
      const root = Buffer.from(knownRoots[treeSize - 1]!, 'hex');
      const path = proof.map((h) => Buffer.from(h, 'hex'));
      expect(verifyInclusion(hashLeaf(leafInputs[leafIndex]!), leafIndex, treeSize, path, root)).toBe(true);
      expect(verifyInclusion(hashLeaf(leafInputs[leafIndex]!), leafIndex ^ 1, treeSize, path, root)).toBe(
        false,
      );
    }
    for (const { size1, size2, proof } of knownConsistencyProofs) {
      const [root1, root2] = [knownRoots[size1 - 1]!, knownRoots[size2 - 1]!].map((h) =>
        Buffer.from(h, 'hex'),
      );
      const path = proof.map((h) => Buffer.from(h, 'hex'));
      expect(verifyConsistency(size1, size2, root1!, root2!, path)).toBe(true);
      expect(verifyConsistency(size1, size2, root2!, root1!, path)).toBe(false);
    }
  });
});

describe('inclusion and consistency proofs against an independent implementation, every pair up to n = 64', () => {
  const inputs = Array.from({ length: 64 }, (_, i) => Buffer.from(`leaf ${i} ${'x'.repeat(i % 7)}`));
  const leaves = treeOf(inputs);
  // A low cache level exercises both the cached and the range-read paths on a small tree.
  const builders = [
    ['default cache', createProofBuilder(leaves)],
    ['subtrees cached from 4 leaves', createProofBuilder(leaves, { cacheFromLevel: 2 })],
  ] as const;
  const roots = Array.from({ length: 65 }, (_, n) => naive.mth(inputs.slice(0, n)));

  it.each(builders)(
    'given %s, then every inclusion proof equals PATH(m, D[n]) and verifies',
    async (_, builder) => {
      for (let n = 1; n <= 64; n++) {
        expect((await builder.rootAt(n)).equals(roots[n]!)).toBe(true);
        for (let m = 0; m < n; m++) {
          const proof = await builder.inclusionProof(m, n);
          const expected = naive.path(m, inputs.slice(0, n));
          expect(hex(proof)).toEqual(hex(expected));
          const leafHash = naive.leafHashOf(inputs[m]!);
          expect(naive.rootFromPath(m, n, leafHash, proof)?.equals(roots[n]!)).toBe(true);
          expect(verifyInclusion(leafHash, m, n, proof, roots[n]!)).toBe(true);
        }
      }
    },
  );

  it.each(builders)(
    'given %s, then every consistency proof equals PROOF(m, D[n]) and verifies',
    async (_, builder) => {
      for (let n = 1; n <= 64; n++)
        for (let m = 1; m <= n; m++) {
          const proof = await builder.consistencyProof(m, n);
          expect(hex(proof)).toEqual(hex(m === n ? [] : naive.proof(m, inputs.slice(0, n))));
          expect(verifyConsistency(m, n, roots[m]!, roots[n]!, proof)).toBe(true);
        }
    },
  );

  it('given a valid inclusion proof, when anything about it is wrong, then verification fails', () => {
    for (let n = 1; n <= 64; n++)
      for (let m = 0; m < n; m++) {
        const proof = naive.path(m, inputs.slice(0, n));
        const leafHash = naive.leafHashOf(inputs[m]!);
        const root = roots[n]!;
        const wrong: [string, boolean][] = [
          ['other leaf', verifyInclusion(naive.leafHashOf(Buffer.from('other')), m, n, proof, root)],
          ['index + 1', verifyInclusion(leafHash, m + 1, n, proof, root)],
          ['index − 1', m > 0 && verifyInclusion(leafHash, m - 1, n, proof, root)],
          ['size × 2', verifyInclusion(leafHash, m, n * 2, proof, root)],
          ['other root', verifyInclusion(leafHash, m, n, proof, roots[n - 1]!)],
          ['extra node', verifyInclusion(leafHash, m, n, [...proof, root], root)],
          ['missing node', proof.length > 0 && verifyInclusion(leafHash, m, n, proof.slice(0, -1), root)],
          ...proof.map((_, i): [string, boolean] => {
            const flipped = proof.map((h) => Buffer.from(h));
            flipped[i]![0]! ^= 8;
            return [`bit flipped in node ${i}`, verifyInclusion(leafHash, m, n, flipped, root)];
          }),
        ];
        expect(wrong.filter(([, accepted]) => accepted).map(([what]) => `${what} (${m}, ${n})`)).toEqual([]);
      }
  });

  it('given a valid consistency proof, when anything about it is wrong, then verification fails', () => {
    for (let n = 2; n <= 64; n++)
      for (let m = 1; m < n; m++) {
        const proof = naive.proof(m, inputs.slice(0, n));
        const [root1, root2] = [roots[m]!, roots[n]!];
        const wrong: [string, boolean][] = [
          ['swapped roots', verifyConsistency(m, n, root2, root1, proof)],
          ['old size + 1', m + 1 < n && verifyConsistency(m + 1, n, root1, root2, proof)],
          ['new size × 2', verifyConsistency(m, n * 2, root1, root2, proof)],
          ['empty proof', verifyConsistency(m, n, root1, root2, [])],
          ['extra node', verifyConsistency(m, n, root1, root2, [...proof, root1])],
          ['missing node', verifyConsistency(m, n, root1, root2, proof.slice(0, -1))],
          ...proof.map((_, i): [string, boolean] => {
            const flipped = proof.map((h) => Buffer.from(h));
            flipped[i]![0]! ^= 16;
            return [`bit flipped in node ${i}`, verifyConsistency(m, n, root1, root2, flipped)];
          }),
        ];
        expect(wrong.filter(([, accepted]) => accepted).map(([what]) => `${what} (${m}, ${n})`)).toEqual([]);
      }
  });

  it('given equal or empty sizes, then only an empty proof between equal roots is consistent', () => {
    expect(verifyConsistency(5, 5, roots[5]!, roots[5]!, [])).toBe(true);
    expect(verifyConsistency(5, 5, roots[5]!, roots[6]!, [])).toBe(false);
    expect(verifyConsistency(5, 5, roots[5]!, roots[5]!, [roots[1]!])).toBe(false);
    expect(verifyConsistency(0, 5, EMPTY_ROOT, roots[5]!, [])).toBe(false);
    expect(verifyConsistency(6, 5, roots[6]!, roots[5]!, [])).toBe(false);
  });

  it('given sizes the recorded leaves do not cover, then the builder refuses instead of guessing', async () => {
    const builder = createProofBuilder(leaves);
    await expect(builder.inclusionProof(64, 64)).rejects.toThrow('not in a tree of size 64');
    await expect(builder.inclusionProof(0, 65)).rejects.toThrow('exceeds the 64 recorded leaves');
    await expect(builder.consistencyProof(0, 10)).rejects.toThrow('needs 0 < old ≤ new');
    await expect(builder.consistencyProof(11, 10)).rejects.toThrow('needs 0 < old ≤ new');
  });

  it('given subtree roots stored as the sealer completed them, then proofs read them instead of hashing leaves', async () => {
    const stored = new MemorySubtreeRoots();
    const frontier = MerkleFrontier.empty();
    for (const input of inputs)
      frontier.append(hashLeaf(input), (level, index, hash) => {
        if (level >= 3) stored.set(level, index, hash);
      });
    // Every complete subtree of ≥ 8 leaves in 64: 8 + 4 + 2 + 1.
    expect(stored.count).toBe(15);
    expect(stored.get(6, 0)?.equals(roots[64]!)).toBe(true);
    let leavesRead = 0;
    const counting = {
      size: () => leaves.size(),
      get: (i: number) => (leavesRead++, leaves.get(i)),
      range: (from: number, to: number) => ((leavesRead += to - from), leaves.range(from, to)),
    };
    const builder = createProofBuilder(counting, { subtrees: stored, cacheFromLevel: 3 });
    const proof = await builder.inclusionProof(0, 64);
    expect(hex(proof)).toEqual(hex(naive.path(0, inputs)));
    // Levels 0-2 come from leaves (1 + 2 + 4), levels 3-5 from the stored roots.
    expect(leavesRead).toBe(7);
    expect(stored.count).toBe(15);
  });
});
