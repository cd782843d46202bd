/**
 * verifyLog's promises, on generated logs sealed at generated checkpoints: an untouched log verifies
 * every checkpoint; any edit, deletion, insertion or reorder fails at or before the first changed
 * leaf, and exactly there when the sealer's recorded leaf hashes are given.
 * Beside them, a kill check: recorded leaf hashes read out of leaf order (a store answering its
 * range sorted by hash, as a table read without ORDER BY would) are caught at the count `npm test` runs.
 */
import crypto from 'node:crypto';
import fc from 'fast-check';
import {
  loadOrCreateSigningKey,
  MemoryLeafHashes,
  MerkleSealer,
  verifyLog,
  type RecordedEventLike,
  type SigningKey,
  type VerifyLogResult,
} from '../../src/ledger';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const ORIGIN = 'mindledger.test/ledger';
const newKey = (): SigningKey =>
  loadOrCreateSigningKey(
    crypto.generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  );
const key = newKey();

type Mutation =
  | { kind: 'edit'; index: number }
  | { kind: 'delete'; index: number }
  | { kind: 'insert'; index: number }
  | { kind: 'reorder'; index: number; other: number; keepPositions: boolean };

const eventArbitrary = fc.record({
  type: fc.constantFrom(
    'ProjectCreated',
    'SkillCreated',
    'SkillUpdated',
    'AgentDeleted',
    'LedgerCheckpointSigned',
  ),
  stream: fc.constantFrom('project-1', 'skill-2', 'agent-3', 'ledger-checkpoints'),
  data: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  gap: fc.integer({ min: 1, max: 4 }),
});

/** A log as the store holds it: positions increasing with gaps (a PostgreSQL sequence), unique ids. */
const logArbitrary = fc.array(eventArbitrary, { minLength: 1, maxLength: 60 }).map((drafts) => {
  let position = 0n;
  return drafts.map(({ type, stream, data, gap }, i): RecordedEventLike => ({
    type,
    data,
    meta: {
      position: (position += BigInt(gap)),
      stream,
      streamPosition: BigInt(i + 1),
      eventId: `event-${i}`,
      recordedAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
      schemaVersion: 1,
    },
  }));
});

/** Recorded leaf hashes whose range answers in hash order, not leaf order (the kill check's bug). */
class LeafHashesOutOfOrder extends MemoryLeafHashes {
  override range(from: number, to: number) {
    return super.range(from, to).sort(Buffer.compare);
  }
}

/** Seals the log, signing checkpoints at the chosen sizes and always at its full size. */
const seal = (
  events: readonly RecordedEventLike[],
  sizes: readonly number[],
  leafHashes = new MemoryLeafHashes(),
) => {
  const sealer = MerkleSealer.create();
  const wanted = new Set([...sizes.map((s) => s % (events.length + 1)), events.length]);
  const notes: string[] = [];
  const now = new Date('2025-02-03T04:05:06.007Z');
  if (wanted.has(0)) notes.push(sealer.signTreeHead(ORIGIN, now, key).note);
  for (const event of events) {
    leafHashes.append(sealer.append(event).leafHash);
    if (wanted.has(sealer.size)) notes.push(sealer.signTreeHead(ORIGIN, now, key).note);
  }
  return { notes, leafHashes };
};

const mutationArbitrary = (length: number): fc.Arbitrary<Mutation> => {
  const index = fc.nat(length - 1);
  const single: fc.Arbitrary<Mutation>[] = [
    fc.record({ kind: fc.constant('edit' as const), index }),
    fc.record({ kind: fc.constant('delete' as const), index }),
    fc.record({ kind: fc.constant('insert' as const), index }),
  ];
  if (length < 2) return fc.oneof(...single);
  // Two distinct leaves: the second is drawn from the others.
  const reorder = fc
    .record({ index, offset: fc.integer({ min: 1, max: length - 1 }), keepPositions: fc.boolean() })
    .map(({ index: i, offset, keepPositions }) => ({
      kind: 'reorder' as const,
      index: i,
      other: (i + offset) % length,
      keepPositions,
    }));
  return fc.oneof(...single, reorder);
};

/** Applies the tampering; returns the log as now stored and the first leaf index that changed. */
const tamper = (
  events: readonly RecordedEventLike[],
  m: Mutation,
): { log: RecordedEventLike[]; firstChanged: number } => {
  const log = [...events];
  switch (m.kind) {
    case 'edit': {
      const e = log[m.index]!;
      log[m.index] = { ...e, data: { edited: e.data } };
      return { log, firstChanged: m.index };
    }
    case 'delete':
      log.splice(m.index, 1);
      return { log, firstChanged: m.index };
    case 'insert': {
      const before = log[m.index]!;
      log.splice(m.index, 0, {
        type: 'SkillCreated',
        data: { forged: true },
        meta: { ...before.meta, eventId: 'forged' },
      });
      return { log, firstChanged: m.index };
    }
    case 'reorder': {
      const [a, b] = [Math.min(m.index, m.other), Math.max(m.index, m.other)];
      const [ea, eb] = [log[a]!, log[b]!];
      // Either the rows swap whole (positions then out of order), or their contents swap under the positions.
      log[a] = m.keepPositions ? { ...eb, meta: { ...eb.meta, position: ea.meta.position } } : eb;
      log[b] = m.keepPositions ? { ...ea, meta: { ...ea.meta, position: eb.meta.position } } : ea;
      return { log, firstChanged: a };
    }
    default: {
      const _exhaustive: never = m;
      return _exhaustive;
    }
  }
};

async function* pages(events: readonly RecordedEventLike[], size: number) {
  for (let i = 0; i < events.length; i += size) yield events.slice(i, i + size);
}

const failure = (result: VerifyLogResult) => {
  if (result.ok) throw new Error(`verifyLog accepted a tampered log: ${JSON.stringify(result)}`);
  return result;
};

describe('verifyLog', () => {
  it('given an untouched log and its checkpoints, then it verifies every checkpoint and reports ok', async () => {
    await fc.assert(
      fc.asyncProperty(logArbitrary, fc.array(fc.nat(), { maxLength: 5 }), async (events, sizes) => {
        const { notes, leafHashes } = seal(events, sizes);
        const progress: number[] = [];
        const result = await verifyLog(pages(events, 7), notes, key.publicKeyPem, {
          leafHashes,
          origin: ORIGIN,
          progressEvery: 10,
          onProgress: (p) => progress.push(p.events),
        });
        expect(result).toMatchObject({
          ok: true,
          events: events.length,
          checkpointsVerified: notes.length,
          uncheckpointed: 0,
          warnings: [],
        });
        expect(progress[progress.length - 1]).toBe(events.length);
      }),
      { seed: propertySeed(), numRuns: propertyRuns(40) },
    );
  });

  const tamperedLog = logArbitrary.chain((events) =>
    fc.tuple(fc.constant(events), fc.array(fc.nat(), { maxLength: 4 }), mutationArbitrary(events.length)),
  );

  /** A tampered log fails at or before its first changed leaf, and exactly there with `leafHashes`. */
  const failsAtTheChange = async (
    [events, sizes, mutation]: [RecordedEventLike[], number[], Mutation],
    leafHashes: MemoryLeafHashes,
  ) => {
    const { notes } = seal(events, sizes, leafHashes);
    const { log, firstChanged } = tamper(events, mutation);

    const coarse = failure(await verifyLog(log, notes, key.publicKey));
    expect(['root-mismatch', 'log-truncated']).toContain(coarse.problem);
    expect(coarse.leafIndex).toBeLessThanOrEqual(firstChanged);
    expect(coarse.position).toBe(log[coarse.leafIndex]?.meta.position ?? null);
    expect(coarse.afterPosition).toBe(
      coarse.leafIndex === 0 ? null : log[coarse.leafIndex - 1]!.meta.position,
    );

    const exact = failure(await verifyLog(pages(log, 5), notes, key.publicKey, { leafHashes }));
    expect(exact).toMatchObject({ exact: true, leafIndex: firstChanged });
    expect(exact.position).toBe(log[firstChanged]?.meta.position ?? null);
  };

  it('given any edit, deletion, insertion or reorder, then verifyLog fails at or before the first changed leaf, and exactly there with recorded leaf hashes', async () => {
    await fc.assert(
      fc.asyncProperty(tamperedLog, (tampered) => failsAtTheChange(tampered, new MemoryLeafHashes())),
      { seed: propertySeed(), numRuns: propertyRuns(200) },
    );
  });

  it('kill check: recorded leaf hashes read out of leaf order are caught', async () => {
    await expectCaught(
      fc.asyncProperty(tamperedLog, (tampered) => failsAtTheChange(tampered, new LeafHashesOutOfOrder())),
      { seed: propertySeed(), numRuns: propertyRuns(200) },
    );
  });

  it('given the tail of the log removed, then the last checkpoint reports it truncated, from the first missing leaf', async () => {
    const events = fc.sample(
      logArbitrary.filter((e) => e.length >= 10),
      { seed: 3, numRuns: 1 },
    )[0]!;
    const { notes, leafHashes } = seal(events, [4]);
    const log = events.slice(0, events.length - 3);
    expect(failure(await verifyLog(log, notes, key.publicKey))).toMatchObject({
      problem: 'log-truncated',
      leafIndex: 4,
      exact: false,
      lastGoodTreeSize: 4,
    });
    expect(failure(await verifyLog(log, notes, key.publicKey, { leafHashes }))).toMatchObject({
      problem: 'log-truncated',
      leafIndex: log.length,
      position: null,
      afterPosition: log[log.length - 1]!.meta.position,
      exact: true,
    });
  });

  it('given events after the last checkpoint, then they count as uncheckpointed, and a change among them shows against recorded leaf hashes', async () => {
    const events = fc.sample(
      logArbitrary.filter((e) => e.length >= 10),
      { seed: 4, numRuns: 1 },
    )[0]!;
    const { notes, leafHashes } = seal(events, [6]);
    const covered = notes.slice(0, 1);
    expect(await verifyLog(events, covered, key.publicKey)).toMatchObject({
      ok: true,
      uncheckpointed: events.length - 6,
    });
    const { log } = tamper(events, { kind: 'edit', index: 8 });
    expect(await verifyLog(log, covered, key.publicKey)).toMatchObject({ ok: true });
    expect(failure(await verifyLog(log, covered, key.publicKey, { leafHashes }))).toMatchObject({
      problem: 'leaf-mismatch',
      leafIndex: 8,
      position: log[8]!.meta.position,
      exact: true,
    });
  });

  it('given a checkpoint not signed by the trusted key, then it is reported as invalid, not trusted', async () => {
    const events = fc.sample(
      logArbitrary.filter((e) => e.length >= 5),
      { seed: 5, numRuns: 1 },
    )[0]!;
    const { notes } = seal(events, [2]);
    const forger = newKey();
    const forged = MerkleSealer.create();
    for (const e of events.slice(0, 3)) forged.append(e);
    const forgedNote = forged.signTreeHead(ORIGIN, new Date(), forger).note;
    expect(failure(await verifyLog(events, [...notes, forgedNote], key.publicKey))).toMatchObject({
      problem: 'checkpoint-invalid',
      lastGoodTreeSize: 2,
      leafIndex: 2,
      detail: 'Checkpoint #2 (tree size 3): No signature by a trusted key for mindledger.test/ledger',
    });
    expect(
      failure(await verifyLog(events, notes, key.publicKey, { origin: 'another.example/log' })),
    ).toMatchObject({
      problem: 'checkpoint-invalid',
      leafIndex: 0,
    });
  });

  it('given an event nested too deep to encode, then it is reported unreadable at its position', async () => {
    const events = fc.sample(
      logArbitrary.filter((e) => e.length >= 3),
      { seed: 6, numRuns: 1 },
    )[0]!;
    let deep: unknown = 'bottom';
    for (let i = 0; i < 200_000; i++) deep = { d: deep };
    const log = [...events];
    log[1] = { ...log[1]!, data: deep };
    expect(failure(await verifyLog(log, [], key.publicKey))).toMatchObject({
      problem: 'event-unreadable',
      leafIndex: 1,
      position: log[1]!.meta.position,
      exact: true,
    });
  });
});
