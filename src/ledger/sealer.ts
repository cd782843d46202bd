import { z } from 'zod';
import { eventLeafHash, type RecordedEventLike } from './canonical';
import { signCheckpoint, type Checkpoint } from './checkpoint';
import { MerkleFrontier, type SubtreeListener } from './frontier';
import type { Hash } from './hashing';
import type { SigningKey } from './keys';

/** What the sealer is persisted as, beside the read model (JSON; positions as decimal strings). */
type SealerSnapshot = {
  readonly v: 1;
  readonly frontier: ReturnType<MerkleFrontier['snapshot']>;
  /** Global position of the last sealed event; null before the first. */
  readonly lastPosition: string | null;
};

const sealerSnapshotSchema = z.object({
  v: z.literal(1),
  frontier: z.unknown(),
  lastPosition: z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/)
    .nullable(),
});

type SealedLeaf = { readonly leafIndex: number; readonly leafHash: Hash; readonly position: bigint };

type SealerOptions = {
  /**
   * Called with each perfect subtree of at least 2^subtreeMinLevel leaves that an append completes,
   * to keep them (a SubtreeRoots store) for proofs.
   */
  readonly onSubtree?: SubtreeListener;
  /** Default 10: one call per 1,024 events, about two stored roots per 1,024 events. */
  readonly subtreeMinLevel?: number;
};

/**
 * Appends events to the log's hash tree in the order the log is tailed, in O(log n) memory. The
 * caller keeps each returned leaf hash (for proofs and exact tamper location) and persists
 * `snapshot()` atomically with them, so a restart resumes without rehashing the log.
 */
export class MerkleSealer {
  private constructor(
    private readonly frontier: MerkleFrontier,
    private last: bigint | null,
    private readonly options: SealerOptions,
  ) {}

  static create(options: SealerOptions = {}): MerkleSealer {
    return new MerkleSealer(MerkleFrontier.empty(), null, options);
  }

  /** Resumes from `snapshot()`'s JSON (validated: it comes from storage). */
  static restore(snapshot: unknown, options: SealerOptions = {}): MerkleSealer {
    const parsed = sealerSnapshotSchema.parse(snapshot);
    const frontier = MerkleFrontier.restore(parsed.frontier);
    if ((frontier.size === 0) !== (parsed.lastPosition === null))
      throw new Error('A sealer snapshot has a last position exactly when it sealed an event');
    return new MerkleSealer(
      frontier,
      parsed.lastPosition === null ? null : BigInt(parsed.lastPosition),
      options,
    );
  }

  get size(): number {
    return this.frontier.size;
  }

  get lastPosition(): bigint | null {
    return this.last;
  }

  append(event: RecordedEventLike): SealedLeaf {
    const leafHash = eventLeafHash(event);
    const leafIndex = this.frontier.size;
    const minLevel = this.options.subtreeMinLevel ?? 10;
    const onSubtree = this.options.onSubtree;
    this.frontier.append(
      leafHash,
      onSubtree &&
        ((level, index, hash) => {
          if (level >= minLevel) onSubtree(level, index, hash);
        }),
    );
    this.last = event.meta.position;
    return { leafIndex, leafHash, position: event.meta.position };
  }

  root(): Hash {
    return this.frontier.root();
  }

  /** The checkpoint of everything sealed so far. */
  treeHead(origin: string, now: Date): Checkpoint {
    return {
      origin,
      treeSize: this.frontier.size,
      rootHash: this.frontier.root(),
      timestamp: now.toISOString(),
      lastPosition: this.last,
    };
  }

  /** The signed note of treeHead(origin, now). */
  signTreeHead(origin: string, now: Date, key: SigningKey): { checkpoint: Checkpoint; note: string } {
    const checkpoint = this.treeHead(origin, now);
    return { checkpoint, note: signCheckpoint(checkpoint, key) };
  }

  snapshot(): SealerSnapshot {
    return {
      v: 1,
      frontier: this.frontier.snapshot(),
      lastPosition: this.last === null ? null : this.last.toString(),
    };
  }
}

type CheckpointPolicy = {
  /** Sign once this many events were sealed since the last checkpoint (LEDGER_CHECKPOINT_EVERY). */
  readonly everyEvents: number;
  /** …or once this long has passed with at least one new event (LEDGER_CHECKPOINT_INTERVAL_MS). */
  readonly everyMs: number;
};

/**
 * Whether to sign a checkpoint now. `eventsSinceCheckpoint` must not count checkpoint events
 * themselves: each checkpoint is an event of the log too, and counting it would sign a new
 * checkpoint every interval forever on an idle log.
 */
export const checkpointDue = (
  since: { readonly eventsSinceCheckpoint: number; readonly msSinceCheckpoint: number },
  policy: CheckpointPolicy,
): boolean =>
  since.eventsSinceCheckpoint > 0 &&
  (since.eventsSinceCheckpoint >= policy.everyEvents || since.msSinceCheckpoint >= policy.everyMs);
