import { performance } from 'node:perf_hooks';
import { leafText, type RecordedEventLike } from '../src/ledger/canonical';
import { hashLeafText } from '../src/ledger/hashing';
import { loadOrCreateSigningKey } from '../src/ledger/keys';
import { MemoryLeafHashes, MemorySubtreeRoots } from '../src/ledger/leafStore';
import { createProofBuilder } from '../src/ledger/proofs';
import { MerkleSealer } from '../src/ledger/sealer';
import { verifyConsistency, verifyInclusion } from '../src/ledger/verifyProofs';
import { verifyLog } from '../src/ledger/verifyLog';
import { fmt, percentile, ratio, tmpDir } from './support';

const ORIGIN = 'mindledger.bench/ledger';
const PAGE = 1000;

/** Events shaped like the log's (a skill with params, an agent, a project), positions with gaps. */
const syntheticEvent = (i: number): RecordedEventLike => {
  const kind = i % 3;
  return {
    type: kind === 0 ? 'SkillCreated' : kind === 1 ? 'AgentUpdated' : 'ProjectCreated',
    data:
      kind === 0
        ? {
            skillId: i,
            projectId: i % 17,
            name: `skill_${i}`,
            type: 'text2sql',
            params: { database: 'files', tables: ['home_rentals', `t_${i % 100}`], description: 'Rentals' },
            createdAt: '2025-01-01 00:00:00.000000',
          }
        : kind === 1
          ? {
              agentId: i,
              name: `agent_${i}`,
              model: { provider: 'openai', model_name: 'gpt-4o' },
              skills: [i - 1],
            }
          : { name: `project_${i}`, createdAt: '2025-01-01 00:00:00.000000' },
    meta: {
      position: BigInt(i + 1 + Math.floor(i / 7)),
      stream: `stream-${i % 1000}`,
      streamPosition: BigInt(Math.floor(i / 1000) + 1),
      eventId: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
      recordedAt: new Date(Date.UTC(2025, 0, 1) + i).toISOString(),
      schemaVersion: 1,
    },
  };
};

/** The log as a reader pages it: arrays of PAGE events, made on the fly (constant memory). */
function* pages(total: number): Generator<RecordedEventLike[]> {
  for (let from = 0; from < total; from += PAGE) {
    const page: RecordedEventLike[] = [];
    for (let i = from; i < Math.min(total, from + PAGE); i++) page.push(syntheticEvent(i));
    yield page;
  }
}

const timed = async <T>(work: () => T | Promise<T>): Promise<{ value: T; ms: number }> => {
  const start = performance.now();
  const value = await work();
  return { value, ms: performance.now() - start };
};

const perSecond = (events: number, ms: number) => (events / ms) * 1000;

/**
 * The floor of any verification: each event's canonical leaf encoded and hashed once, no tree, no
 * reading (a checksum of the hashes, so the work is not optimised away).
 */
export const encodeAndHash = (events: readonly RecordedEventLike[]) => {
  let n = 0;
  for (const event of events) n += hashLeafText(leafText(event))[0]!;
  return n;
};

/**
 * Verify rate over `total` synthetic events against the floor (canonical encoding + one SHA-256 per
 * event, no tree), the cost of sealing one event, and proof latency at that size.
 */
export const benchLedger = async (total = Number(process.env.BENCH_LEDGER_EVENTS ?? 1_000_000)) => {
  const key = loadOrCreateSigningKey(`${tmpDir('mindledger-bench-ledger-')}/signing.key`);

  const generate = await timed(() => {
    let n = 0;
    for (const page of pages(total)) n += page.length;
    return n;
  });

  const floor = await timed(() => {
    let n = 0;
    for (const page of pages(total)) n += encodeAndHash(page);
    return n;
  });

  // Sealing as the projection runner would: append, keep the leaf hash and the large subtree roots,
  // sign a checkpoint every 10,000 events.
  const leafHashes = new MemoryLeafHashes(total);
  const subtrees = new MemorySubtreeRoots();
  const sealer = MerkleSealer.create({ onSubtree: (level, index, hash) => subtrees.set(level, index, hash) });
  const notes: string[] = [];
  const seal = await timed(() => {
    for (const page of pages(total))
      for (const event of page) {
        leafHashes.append(sealer.append(event).leafHash);
        if (sealer.size % 10_000 === 0) notes.push(sealer.signTreeHead(ORIGIN, new Date(), key).note);
      }
    notes.push(sealer.signTreeHead(ORIGIN, new Date(), key).note);
  });

  const verify = await timed(() => verifyLog(pages(total), notes, key.publicKey, { origin: ORIGIN }));
  if (!verify.value.ok) throw new Error(`verifyLog failed on an untouched log: ${verify.value.detail}`);
  const verifyWithLeaves = await timed(() => verifyLog(pages(total), notes, key.publicKey, { leafHashes }));
  if (!verifyWithLeaves.value.ok) throw new Error('verifyLog with leaf hashes failed on an untouched log');

  const floorRate = perSecond(total, floor.ms);
  const verifyRate = perSecond(total, verify.ms);
  const generateRate = perSecond(total, generate.ms);
  console.log(
    `ledger verify of ${fmt(total)} events, ${fmt(notes.length)} checkpoints: ${fmt(verify.ms)} ms → ${fmt(verifyRate)} events/s ` +
      `(goal ≥ 100,000) vs encode + SHA-256 floor ${fmt(floorRate)} events/s → ${fmt(ratio(verifyRate, floorRate), 2)} ` +
      `(making the events alone: ${fmt(generateRate)} events/s)`,
  );
  console.log(
    `ledger verify comparing recorded leaf hashes too: ${fmt(perSecond(total, verifyWithLeaves.ms))} events/s → ` +
      `${fmt(ratio(perSecond(total, verifyWithLeaves.ms), verifyRate), 2)} of plain verify`,
  );
  const sealNs = (seal.ms * 1e6) / total;
  const floorNs = (floor.ms * 1e6) / total;
  console.log(
    `ledger seal (append + keep leaf hash + subtree roots + a signed checkpoint per 10,000): ${fmt(sealNs)} ns/event ` +
      `vs floor ${fmt(floorNs)} ns/event → ${fmt(ratio(sealNs, floorNs), 2)}; ${fmt(subtrees.count)} subtree roots kept`,
  );

  // Proofs at the full size, from the recorded leaf hashes.
  const random = (() => {
    let state = 12345;
    return (below: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((state / 2 ** 31) * below);
    };
  })();
  const root = sealer.root();
  const cold = createProofBuilder(leafHashes);
  const coldFirst = await timed(() => cold.inclusionProof(random(total), total));
  const warm = createProofBuilder(leafHashes, { subtrees });
  const inclusion: number[] = [];
  const consistency: number[] = [];
  for (let i = 0; i < 300; i++) {
    const index = random(total);
    const { value: proof, ms } = await timed(() => warm.inclusionProof(index, total));
    inclusion.push(ms);
    if (!verifyInclusion(leafHashes.get(index), index, total, proof, root))
      throw new Error('bad inclusion proof');
  }
  for (let i = 0; i < 100; i++) {
    const oldSize = 1 + random(total - 1);
    const { value: proof, ms } = await timed(() => warm.consistencyProof(oldSize, total));
    consistency.push(ms);
    const oldRoot = await warm.rootAt(oldSize);
    if (!verifyConsistency(oldSize, total, oldRoot, root, proof)) throw new Error('bad consistency proof');
  }
  console.log(
    `ledger proofs at n = ${fmt(total)}: inclusion p50 ${fmt(percentile(inclusion, 50), 3)} ms, p99 ${fmt(percentile(inclusion, 99), 3)} ms; ` +
      `consistency p50 ${fmt(percentile(consistency, 50), 3)} ms, p99 ${fmt(percentile(consistency, 99), 3)} ms ` +
      `(subtree roots kept while sealing); first proof with an empty cache ${fmt(coldFirst.ms)} ms`,
  );

  return {
    name: 'ledger',
    verifyEventsPerSecond: verifyRate,
    floorEventsPerSecond: floorRate,
    sealNanosecondsPerEvent: sealNs,
    inclusionP50Ms: percentile(inclusion, 50),
  };
};

if (require.main === module)
  benchLedger().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
