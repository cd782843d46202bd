import crypto from 'node:crypto';
import fc from 'fast-check';
import {
  checkpointDue,
  eventLeafHash,
  MerkleFrontier,
  MerkleSealer,
  type RecordedEventLike,
} from '../../src/ledger';

// An independent root: RFC 6962's recursive MTH over leaf hashes, with its own hashing.
const sha = (...parts: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();
const mth = (hashes: Buffer[]): Buffer => {
  if (hashes.length === 0) return sha();
  if (hashes.length === 1) return hashes[0]!;
  const k = 2 ** Math.ceil(Math.log2(hashes.length) - 1);
  return sha(Buffer.from([1]), mth(hashes.slice(0, k)), mth(hashes.slice(k)));
};

const eventAt = (i: number, position: bigint): RecordedEventLike => ({
  type: i % 3 === 0 ? 'ProjectCreated' : 'SkillCreated',
  data: { n: i, name: `item-${i}` },
  meta: {
    position,
    stream: `s-${i % 5}`,
    streamPosition: BigInt(Math.floor(i / 5) + 1),
    eventId: `e-${i}`,
    recordedAt: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
    schemaVersion: 1,
  },
});

const eventsWithGaps = (gaps: readonly number[]) => {
  let position = 0n;
  return gaps.map((gap, i) => eventAt(i, (position += BigInt(gap))));
};

describe('MerkleSealer and its persisted frontier', () => {
  it('given any events and any restart point, when the frontier is persisted as JSON and restored, then every later root equals a from-scratch tree', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 0, maxLength: 150 }),
        fc.nat(),
        (gaps, cut) => {
          const events = eventsWithGaps(gaps);
          const restartAt = events.length === 0 ? 0 : cut % (events.length + 1);
          const leafHashes = events.map(eventLeafHash);

          const before = MerkleSealer.create();
          for (const e of events.slice(0, restartAt)) before.append(e);
          const stored = JSON.parse(JSON.stringify(before.snapshot())) as unknown;
          const resumed = MerkleSealer.restore(stored);
          expect(resumed.size).toBe(restartAt);
          expect(resumed.lastPosition).toBe(restartAt === 0 ? null : events[restartAt - 1]!.meta.position);
          expect(resumed.root().equals(mth(leafHashes.slice(0, restartAt)))).toBe(true);

          for (let i = restartAt; i < events.length; i++) {
            const sealed = resumed.append(events[i]!);
            expect(sealed.leafIndex).toBe(i);
            expect(sealed.leafHash.equals(leafHashes[i]!)).toBe(true);
            expect(resumed.root().equals(mth(leafHashes.slice(0, i + 1)))).toBe(true);
          }
        },
      ),
      { seed: 424242, numRuns: 60 },
    );
  });

  it('given a frontier, then it holds one node per set bit of its size', () => {
    const frontier = MerkleFrontier.empty();
    for (let i = 0; i < 37; i++) frontier.append(sha(Buffer.from([i])));
    const snapshot = frontier.snapshot();
    // 37 = 32 + 4 + 1.
    expect(snapshot.size).toBe('37');
    expect(snapshot.nodes).toHaveLength(3);
    expect(MerkleFrontier.restore(snapshot).root().equals(frontier.root())).toBe(true);
  });

  it('given a damaged snapshot, then restoring refuses it', () => {
    const frontier = MerkleFrontier.empty();
    for (let i = 0; i < 5; i++) frontier.append(sha(Buffer.from([i])));
    const good = frontier.snapshot();
    expect(() => MerkleFrontier.restore({ ...good, nodes: good.nodes.slice(1) })).toThrow(
      'holds 2 nodes, not 1',
    );
    expect(() => MerkleFrontier.restore({ ...good, size: '7' })).toThrow('holds 3 nodes, not 2');
    expect(() => MerkleFrontier.restore({ ...good, nodes: ['zz', good.nodes[1]] })).toThrow('hex');
    expect(() => MerkleFrontier.restore({ ...good, size: '05' })).toThrow('decimal');
    expect(() =>
      MerkleSealer.restore({ v: 1, frontier: MerkleFrontier.empty().snapshot(), lastPosition: '12' }),
    ).toThrow('last position exactly when');
  });

  it('given a sealer with a subtree listener, then it reports every perfect subtree from the minimum level, with its root', () => {
    const reported: [number, number, string][] = [];
    const sealer = MerkleSealer.create({
      subtreeMinLevel: 2,
      onSubtree: (level, index, hash) => reported.push([level, index, hash.toString('hex')]),
    });
    const events = eventsWithGaps(Array.from({ length: 16 }, () => 1));
    for (const e of events) sealer.append(e);
    const leaves = events.map(eventLeafHash);
    const expected: [number, number, string][] = [];
    for (let level = 2; level <= 4; level++)
      for (let index = 0; index < 16 / 2 ** level; index++)
        expected.push([
          level,
          index,
          mth(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level)).toString('hex'),
        ]);
    const byKey = (a: [number, number, string], b: [number, number, string]) => a[0] - b[0] || a[1] - b[1];
    expect([...reported].sort(byKey)).toEqual(expected.sort(byKey));
  });

  it('given sealed events, then the tree head names the size, root, time and last position', () => {
    const sealer = MerkleSealer.create();
    const events = eventsWithGaps([1, 5, 2]);
    for (const e of events) sealer.append(e);
    const head = sealer.treeHead('mindledger.example/log', new Date('2025-03-04T05:06:07.089Z'));
    expect(head).toEqual({
      origin: 'mindledger.example/log',
      treeSize: 3,
      rootHash: mth(events.map(eventLeafHash)),
      timestamp: '2025-03-04T05:06:07.089Z',
      lastPosition: 8n,
    });
  });

  it('given the checkpoint policy, then a checkpoint is due after enough events or time, never on an idle log', () => {
    const policy = { everyEvents: 1000, everyMs: 60_000 };
    expect(checkpointDue({ eventsSinceCheckpoint: 0, msSinceCheckpoint: 3_600_000 }, policy)).toBe(false);
    expect(checkpointDue({ eventsSinceCheckpoint: 999, msSinceCheckpoint: 59_999 }, policy)).toBe(false);
    expect(checkpointDue({ eventsSinceCheckpoint: 1000, msSinceCheckpoint: 0 }, policy)).toBe(true);
    expect(checkpointDue({ eventsSinceCheckpoint: 1, msSinceCheckpoint: 60_000 }, policy)).toBe(true);
  });
});
