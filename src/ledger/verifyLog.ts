import { eventLeafHash, type RecordedEventLike } from './canonical';
import { parseCheckpointBody, openSignedNote, verifyCheckpoint, type Checkpoint } from './checkpoint';
import { MerkleFrontier } from './frontier';
import { sameHash, type Hash } from './hashing';
import type { PublicKeyInput } from './keys';
import type { LeafHashes } from './leafStore';
import { messageOf } from '../shared/errors';

export type VerifyProgress = {
  readonly events: number;
  readonly position: bigint | null;
  readonly checkpointsVerified: number;
};

type VerifyLogOptions = {
  readonly onProgress?: (progress: VerifyProgress) => void;
  /** Events between two progress reports (default 65,536; a last one comes at the end). */
  readonly progressEvery?: number;
  /**
   * The leaf hashes the sealer recorded. With them a failure names the exact event that changed
   * (once they are shown to match the failing checkpoint), not just the checkpointed range it lies in.
   */
  readonly leafHashes?: LeafHashes;
  /** Refuse checkpoints of another log. */
  readonly origin?: string;
  /**
   * The signed note an event carries when it records a checkpoint (the service's own checkpoint
   * event), else undefined. A checkpoint's own event is a leaf after the tree it signs, so no
   * checkpoint can cover the last one's: when it carries the last verified checkpoint's note, it is
   * not counted as `uncheckpointed` (its note is signed; the rest of it awaits the next checkpoint).
   */
  readonly checkpointNoteOf?: (event: RecordedEventLike) => string | undefined;
};

type VerifyProblem =
  /** A checkpoint is malformed, of another origin, or not signed by a trusted key. */
  | 'checkpoint-invalid'
  /** The events before a checkpoint's size are not the ones it signed: edited, deleted, inserted or reordered. */
  | 'root-mismatch'
  /** A checkpoint covers more events than the log holds. */
  | 'log-truncated'
  /** An event cannot be encoded (e.g. nested deeper than the stack allows). */
  | 'event-unreadable'
  /** After the last checkpoint, an event differs from the leaf hash recorded when it was sealed. */
  | 'leaf-mismatch'
  /** A checkpoint a witness holds is not in the log (deleted): witness.ts. */
  | 'checkpoint-missing'
  /** A log long enough to have checkpoints holds none: witness.ts. */
  | 'no-checkpoints';

type CheckpointSummary = {
  readonly treeSize: number;
  readonly rootHash: string;
  readonly timestamp: string;
};

export type VerifyLogResult =
  | {
      readonly ok: true;
      readonly events: number;
      /** Root of the whole log as read (base64). */
      readonly rootHash: string;
      readonly checkpointsVerified: number;
      readonly lastCheckpoint: CheckpointSummary | null;
      /**
       * Events after the last checkpoint, but for that checkpoint's own event: a checkpoint has yet
       * to vouch for them (0 after a clean stop, which signs what is unsigned).
       */
      readonly uncheckpointed: number;
      readonly warnings: readonly string[];
    }
  | {
      readonly ok: false;
      readonly problem: VerifyProblem;
      readonly detail: string;
      /** The first leaf (0-based, in log order) that may have changed: every leaf before it is verified. */
      readonly leafIndex: number;
      /** The global position of the event now at `leafIndex`; null when the log ends before it. */
      readonly position: bigint | null;
      /** The global position of the last verified event (leaf leafIndex − 1); null when there is none. */
      readonly afterPosition: bigint | null;
      /** True when `leafIndex` is the changed event itself; false when the change lies in [leafIndex, checkpoint size). */
      readonly exact: boolean;
      readonly checkpoint: CheckpointSummary | null;
      /** Leaves [0, lastGoodTreeSize) match a verified checkpoint. */
      readonly lastGoodTreeSize: number;
      readonly events: number;
      readonly warnings: readonly string[];
    };

type Failure = Extract<VerifyLogResult, { ok: false }>;

type PendingCheckpoint =
  | { readonly valid: true; readonly checkpoint: Checkpoint; readonly note: string; readonly order: number }
  | { readonly valid: false; readonly treeSize: number; readonly reason: string; readonly order: number };

const summary = (c: Checkpoint): CheckpointSummary => ({
  treeSize: c.treeSize,
  rootHash: c.rootHash.toString('base64'),
  timestamp: c.timestamp,
});

const CHUNK = 4096;

/** The claimed size of a checkpoint that failed verification, to place the failure in the log (0 if unreadable). */
const claimedSize = (note: string): number => {
  try {
    return parseCheckpointBody(openSignedNote(note).text).treeSize;
  } catch {
    return 0;
  }
};

const prepareCheckpoints = (
  notes: Iterable<string>,
  trusted: PublicKeyInput | readonly PublicKeyInput[],
  origin: string | undefined,
): PendingCheckpoint[] => {
  const prepared: PendingCheckpoint[] = [];
  let order = 0;
  for (const note of notes) {
    const result = verifyCheckpoint(note, trusted);
    if (!result.ok)
      prepared.push({ valid: false, treeSize: claimedSize(note), reason: result.reason, order });
    else if (origin !== undefined && result.checkpoint.origin !== origin)
      prepared.push({
        valid: false,
        treeSize: result.checkpoint.treeSize,
        reason: `Checkpoint of ${result.checkpoint.origin}, not ${origin}`,
        order,
      });
    else prepared.push({ valid: true, checkpoint: result.checkpoint, note, order });
    order++;
  }
  const sizeOf = (p: PendingCheckpoint) => (p.valid ? p.checkpoint.treeSize : p.treeSize);
  return prepared.sort((a, b) => sizeOf(a) - sizeOf(b) || a.order - b.order);
};

type Where = { leafIndex: number; position: bigint | null; afterPosition: bigint | null; exact: boolean };

/**
 * One verification's state as it reads the log: the tree so far, the checkpoints still to settle,
 * the last verified one (leaves [0, lastGood) proven; the frontier there and the positions on each
 * side of that boundary locate a later failure) and the first recorded leaf hash that differs.
 */
class LogVerifier {
  private readonly frontier = MerkleFrontier.empty();
  private readonly warnings: string[] = [];
  private count = 0;
  private previousPosition: bigint | null = null;
  private checkpointsVerified = 0;
  private lastCheckpoint: Checkpoint | null = null;
  private lastNote: string | null = null;
  // The last checkpoint event read (its leaf and note): the last checkpoint's own, when they match.
  private lastCheckpointEvent: { index: number; note: string } | null = null;
  private lastGood = 0;
  private goodFrontier = this.frontier.clone();
  private positionBeforeGood: bigint | null = null;
  private positionAtGood: bigint | null = null;
  // First leaf since lastGood whose hash differs from the recorded one.
  private mismatch: { index: number; position: bigint; afterPosition: bigint | null } | null = null;
  private chunk: readonly Hash[] = [];
  private chunkStart = 0;
  private next = 0;
  private readonly progressEvery: number;

  constructor(
    private readonly pending: readonly PendingCheckpoint[],
    private readonly options: VerifyLogOptions,
    private readonly stored: LeafHashes | undefined,
    private readonly storedSize: number,
  ) {
    this.progressEvery = options.progressEvery ?? 65_536;
  }

  private fail(problem: VerifyProblem, detail: string, where: Where, checkpoint: Checkpoint | null): Failure {
    return {
      ok: false,
      problem,
      detail,
      ...where,
      checkpoint: checkpoint && summary(checkpoint),
      lastGoodTreeSize: this.lastGood,
      events: this.count,
      warnings: this.warnings,
    };
  }

  private atLastGood(): Where {
    return {
      leafIndex: this.lastGood,
      position: this.positionAtGood,
      afterPosition: this.positionBeforeGood,
      exact: false,
    };
  }

  /** Where the next leaf would be: the log ended (or an event failed) just after the last one read. */
  private atEnd(position: bigint | null = null): Where {
    return { leafIndex: this.count, position, afterPosition: this.previousPosition, exact: true };
  }

  private invalidCheckpoint(item: Extract<PendingCheckpoint, { valid: false }>): Failure {
    return this.fail(
      'checkpoint-invalid',
      `Checkpoint #${item.order} (tree size ${item.treeSize}): ${item.reason}`,
      this.atLastGood(),
      null,
    );
  }

  /** Whether the recorded leaf hashes [lastGood, size) rebuild the checkpoint's root: then they can be trusted. */
  private async recordedLeavesMatch(checkpoint: Checkpoint): Promise<boolean> {
    if (!this.stored || this.storedSize < checkpoint.treeSize) return false;
    const tree = this.goodFrontier.clone();
    for (let from = this.lastGood; from < checkpoint.treeSize; from += CHUNK)
      for (const hash of await this.stored.range(from, Math.min(checkpoint.treeSize, from + CHUNK)))
        tree.append(hash);
    return sameHash(tree.root(), checkpoint.rootHash);
  }

  /** Where the change lies, for a checkpoint at or beyond the current size that the log does not match. */
  private async locate(checkpoint: Checkpoint): Promise<Where> {
    if (await this.recordedLeavesMatch(checkpoint)) {
      if (this.mismatch) {
        const { index, position, afterPosition } = this.mismatch;
        return { leafIndex: index, position, afterPosition, exact: true };
      }
      // The recorded leaves agree with every event read, yet rebuild the signed root: the log ended early.
      if (this.count < checkpoint.treeSize) return this.atEnd();
    }
    return this.atLastGood();
  }

  /** Takes a checkpoint whose root matches the tree read so far as the last verified one. */
  private accept(checkpoint: Checkpoint, note: string) {
    const size = checkpoint.treeSize;
    if (checkpoint.lastPosition !== this.previousPosition)
      this.warnings.push(
        `Checkpoint of size ${size} names last position ${checkpoint.lastPosition}, the log ${this.previousPosition}`,
      );
    if (this.mismatch)
      this.warnings.push(
        `The recorded leaf hash ${this.mismatch.index} differs from its event, yet the checkpoint of size ${size} ` +
          'verifies: the leaf hash store is wrong, not the log',
      );
    this.mismatch = null;
    this.checkpointsVerified++;
    this.lastCheckpoint = checkpoint;
    this.lastNote = note;
    this.lastGood = size;
    this.goodFrontier = this.frontier.clone();
    this.positionBeforeGood = this.previousPosition;
    this.positionAtGood = null;
  }

  /** Checks every checkpoint of the current size; a failure ends the verification. */
  async settleCheckpoints(): Promise<Failure | null> {
    for (; this.next < this.pending.length; this.next++) {
      const item = this.pending[this.next]!;
      const size = item.valid ? item.checkpoint.treeSize : item.treeSize;
      if (size > this.count) return null;
      if (!item.valid) return this.invalidCheckpoint(item);
      const { checkpoint } = item;
      if (!sameHash(this.frontier.root(), checkpoint.rootHash)) {
        const where = await this.locate(checkpoint);
        return this.fail(
          'root-mismatch',
          `The first ${size} events do not hash to the root signed at ${checkpoint.timestamp}: ` +
            (where.exact
              ? `leaf ${where.leafIndex} is not the event that was sealed`
              : `an event among leaves [${where.leafIndex}, ${size}) was edited, deleted, inserted or reordered`),
          where,
          checkpoint,
        );
      }
      this.accept(checkpoint, item.note);
    }
    return null;
  }

  /** Whether the next leaf's recorded hash is still to be read (they are read a chunk at a time). */
  private get recordedDue(): boolean {
    return (
      this.stored !== undefined &&
      this.count < this.storedSize &&
      this.count >= this.chunkStart + this.chunk.length
    );
  }

  private async readRecorded() {
    this.chunkStart = this.count;
    this.chunk = await this.stored!.range(this.count, Math.min(this.storedSize, this.count + CHUNK));
  }

  /** Notes the first event whose leaf differs from the one the sealer recorded for it (already read). */
  private compareRecorded(position: bigint, leafHash: Hash) {
    if (!this.stored || this.count >= this.storedSize) return;
    if (this.mismatch === null && !this.chunk[this.count - this.chunkStart]!.equals(leafHash))
      this.mismatch = { index: this.count, position, afterPosition: this.previousPosition };
  }

  /** Whether the tree has reached the size of the next checkpoint to settle. */
  private get checkpointDue(): boolean {
    const item = this.pending[this.next];
    return item !== undefined && (item.valid ? item.checkpoint.treeSize : item.treeSize) <= this.count;
  }

  /** The event's leaf hash, or the failure of an event that cannot be encoded. */
  private leafHashOf(event: RecordedEventLike): Hash | Failure {
    try {
      return eventLeafHash(event);
    } catch (error) {
      const position = event.meta.position;
      return this.fail(
        'event-unreadable',
        `The event at position ${position} cannot be encoded: ${messageOf(error)}`,
        this.atEnd(position),
        null,
      );
    }
  }

  /** Adds one event's leaf to the tree (its recorded hash, if any, read). */
  private append(event: RecordedEventLike, leafHash: Hash) {
    const position = event.meta.position;
    if (this.count === this.lastGood) this.positionAtGood = position;
    const note = this.options.checkpointNoteOf?.(event);
    if (note !== undefined) this.lastCheckpointEvent = { index: this.count, note };
    this.compareRecorded(position, leafHash);
    this.frontier.append(leafHash);
    this.previousPosition = position;
    this.count++;
  }

  /**
   * Adds a page of events to the tree and settles the checkpoints they complete; a failure ends the
   * verification. An event waits only for a chunk of recorded hashes to be read or a checkpoint
   * reached, never for a promise of its own (two per event, and their garbage, for nothing).
   */
  async readPage(page: readonly RecordedEventLike[]): Promise<Failure | null> {
    for (const event of page) {
      const leafHash = this.leafHashOf(event);
      if ('ok' in leafHash) return leafHash;
      if (this.recordedDue) await this.readRecorded();
      this.append(event, leafHash);
      if (this.checkpointDue) {
        const failure = await this.settleCheckpoints();
        if (failure) return failure;
      }
      if (this.count % this.progressEvery === 0)
        this.options.onProgress?.({
          events: this.count,
          position: event.meta.position,
          checkpointsVerified: this.checkpointsVerified,
        });
    }
    return null;
  }

  /** The verdict once every event is read: what is still unsettled or unsealed fails it. */
  async finish(): Promise<VerifyLogResult> {
    if (this.next < this.pending.length) {
      const item = this.pending[this.next]!;
      if (!item.valid) return this.invalidCheckpoint(item);
      return this.fail(
        'log-truncated',
        `A checkpoint signed at ${item.checkpoint.timestamp} covers ${item.checkpoint.treeSize} events; the log holds ${this.count}`,
        await this.locate(item.checkpoint),
        item.checkpoint,
      );
    }
    if (this.mismatch) {
      const { index, position, afterPosition } = this.mismatch;
      return this.fail(
        'leaf-mismatch',
        `The event at leaf ${index} (position ${position}) is not the one sealed there ` +
          '(no checkpoint covers it yet)',
        { leafIndex: index, position, afterPosition, exact: true },
        null,
      );
    }
    if (this.count < this.storedSize)
      return this.fail(
        'log-truncated',
        `The log holds ${this.count} events; ${this.storedSize} were sealed (no checkpoint covers the missing ones yet)`,
        this.atEnd(),
        null,
      );
    this.options.onProgress?.({
      events: this.count,
      position: this.previousPosition,
      checkpointsVerified: this.checkpointsVerified,
    });
    const own = this.lastCheckpointEvent;
    const ownLeaf = own !== null && own.index >= this.lastGood && own.note === this.lastNote ? 1 : 0;
    return {
      ok: true,
      events: this.count,
      rootHash: this.frontier.root().toString('base64'),
      checkpointsVerified: this.checkpointsVerified,
      lastCheckpoint: this.lastCheckpoint && summary(this.lastCheckpoint),
      uncheckpointed: this.count - this.lastGood - ownLeaf,
      warnings: this.warnings,
    };
  }
}

/**
 * Recomputes the log's tree from its events (streamed, in the order the sealer saw them; pages as
 * arrays are welcome) and checks every signed checkpoint: its signature, and the root at its size.
 * Memory stays constant in the number of events (the frontier, plus a chunk of recorded leaf hashes).
 *
 * Positions may have gaps (PostgreSQL sequences), so a deletion shows as the root at the next
 * checkpoint not matching; the report then names the first event after the last good checkpoint,
 * or, when `leafHashes` are given and shown to match the failing checkpoint, the exact event.
 */
export const verifyLog = async (
  events:
    | AsyncIterable<RecordedEventLike | readonly RecordedEventLike[]>
    | Iterable<RecordedEventLike | readonly RecordedEventLike[]>,
  checkpoints: Iterable<string>,
  trusted: PublicKeyInput | readonly PublicKeyInput[],
  options: VerifyLogOptions = {},
): Promise<VerifyLogResult> => {
  const pending = prepareCheckpoints(checkpoints, trusted, options.origin);
  const stored = options.leafHashes;
  const verifier = new LogVerifier(pending, options, stored, stored ? await stored.size() : 0);
  const startFailure = await verifier.settleCheckpoints();
  if (startFailure) return startFailure;
  for await (const item of events) {
    const page: readonly RecordedEventLike[] = Array.isArray(item) ? item : [item as RecordedEventLike];
    const failure = await verifier.readPage(page);
    if (failure) return failure;
  }
  return verifier.finish();
};
