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

export type VerifyLogOptions = {
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

export type VerifyProblem =
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

export type CheckpointSummary = {
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
  const progressEvery = options.progressEvery ?? 65_536;
  const stored = options.leafHashes;
  const storedSize = stored ? await stored.size() : 0;
  const warnings: string[] = [];

  const frontier = MerkleFrontier.empty();
  let count = 0;
  let previousPosition: bigint | null = null;
  let checkpointsVerified = 0;
  let lastCheckpoint: Checkpoint | null = null;
  let lastNote: string | null = null;
  // The last checkpoint event read (its leaf and note): the last checkpoint's own, when they match.
  let lastCheckpointEvent: { index: number; note: string } | null = null;
  // The last verified checkpoint: leaves [0, lastGood) are proven; the frontier there, and the
  // positions on each side of that boundary, locate a later failure.
  let lastGood = 0;
  let goodFrontier = frontier.clone();
  let positionBeforeGood: bigint | null = null;
  let positionAtGood: bigint | null = null;
  // First leaf since lastGood whose hash differs from the recorded one.
  let mismatch: { index: number; position: bigint; afterPosition: bigint | null } | null = null;
  let chunk: readonly Hash[] = [];
  let chunkStart = 0;
  let next = 0;

  const fail = (
    problem: VerifyProblem,
    detail: string,
    where: { leafIndex: number; position: bigint | null; afterPosition: bigint | null; exact: boolean },
    checkpoint: Checkpoint | null,
  ): Failure => ({
    ok: false,
    problem,
    detail,
    ...where,
    checkpoint: checkpoint && summary(checkpoint),
    lastGoodTreeSize: lastGood,
    events: count,
    warnings,
  });

  const atLastGood = () => ({
    leafIndex: lastGood,
    position: positionAtGood,
    afterPosition: positionBeforeGood,
    exact: false,
  });

  /** Whether the recorded leaf hashes [lastGood, size) rebuild the checkpoint's root: then they can be trusted. */
  const recordedLeavesMatch = async (checkpoint: Checkpoint): Promise<boolean> => {
    if (!stored || storedSize < checkpoint.treeSize) return false;
    const tree = goodFrontier.clone();
    for (let from = lastGood; from < checkpoint.treeSize; from += CHUNK)
      for (const hash of await stored.range(from, Math.min(checkpoint.treeSize, from + CHUNK)))
        tree.append(hash);
    return sameHash(tree.root(), checkpoint.rootHash);
  };

  /** Where the change lies, for a checkpoint at or beyond the current size that the log does not match. */
  const locate = async (checkpoint: Checkpoint) => {
    if (await recordedLeavesMatch(checkpoint)) {
      if (mismatch)
        return {
          leafIndex: mismatch.index,
          position: mismatch.position,
          afterPosition: mismatch.afterPosition,
          exact: true,
        };
      // The recorded leaves agree with every event read, yet rebuild the signed root: the log ended early.
      if (count < checkpoint.treeSize)
        return { leafIndex: count, position: null, afterPosition: previousPosition, exact: true };
    }
    return atLastGood();
  };

  /** Checks every checkpoint of the current size; a failure ends the verification. */
  const settleCheckpoints = async (): Promise<Failure | null> => {
    for (; next < pending.length; next++) {
      const item = pending[next]!;
      const size = item.valid ? item.checkpoint.treeSize : item.treeSize;
      if (size > count) return null;
      if (!item.valid)
        return fail(
          'checkpoint-invalid',
          `Checkpoint #${item.order} (tree size ${size}): ${item.reason}`,
          atLastGood(),
          null,
        );
      const { checkpoint } = item;
      if (!sameHash(frontier.root(), checkpoint.rootHash)) {
        const where = await locate(checkpoint);
        return fail(
          'root-mismatch',
          `The first ${size} events do not hash to the root signed at ${checkpoint.timestamp}: ` +
            (where.exact
              ? `leaf ${where.leafIndex} is not the event that was sealed`
              : `an event among leaves [${where.leafIndex}, ${size}) was edited, deleted, inserted or reordered`),
          where,
          checkpoint,
        );
      }
      if (checkpoint.lastPosition !== previousPosition)
        warnings.push(
          `Checkpoint of size ${size} names last position ${checkpoint.lastPosition}, the log ${previousPosition}`,
        );
      if (mismatch)
        warnings.push(
          `The recorded leaf hash ${mismatch.index} differs from its event, yet the checkpoint of size ${size} ` +
            'verifies: the leaf hash store is wrong, not the log',
        );
      mismatch = null;
      checkpointsVerified++;
      lastCheckpoint = checkpoint;
      lastNote = item.note;
      lastGood = size;
      goodFrontier = frontier.clone();
      positionBeforeGood = previousPosition;
      positionAtGood = null;
    }
    return null;
  };

  const startFailure = await settleCheckpoints();
  if (startFailure) return startFailure;

  for await (const item of events) {
    const page: readonly RecordedEventLike[] = Array.isArray(item) ? item : [item as RecordedEventLike];
    for (const event of page) {
      const position = event.meta.position;
      let leafHash: Hash;
      try {
        leafHash = eventLeafHash(event);
      } catch (error) {
        return fail(
          'event-unreadable',
          `The event at position ${position} cannot be encoded: ${messageOf(error)}`,
          { leafIndex: count, position, afterPosition: previousPosition, exact: true },
          null,
        );
      }
      if (count === lastGood) positionAtGood = position;
      const note = options.checkpointNoteOf?.(event);
      if (note !== undefined) lastCheckpointEvent = { index: count, note };
      if (count < storedSize && stored) {
        if (count >= chunkStart + chunk.length) {
          chunkStart = count;
          chunk = await stored.range(count, Math.min(storedSize, count + CHUNK));
        }
        if (mismatch === null && !chunk[count - chunkStart]!.equals(leafHash))
          mismatch = { index: count, position, afterPosition: previousPosition };
      }
      frontier.append(leafHash);
      previousPosition = position;
      count++;
      if (next < pending.length) {
        const failure = await settleCheckpoints();
        if (failure) return failure;
      }
      if (count % progressEvery === 0) options.onProgress?.({ events: count, position, checkpointsVerified });
    }
  }

  if (next < pending.length) {
    const item = pending[next]!;
    if (!item.valid)
      return fail(
        'checkpoint-invalid',
        `Checkpoint #${item.order} (tree size ${item.treeSize}): ${item.reason}`,
        atLastGood(),
        null,
      );
    const where = await locate(item.checkpoint);
    return fail(
      'log-truncated',
      `A checkpoint signed at ${item.checkpoint.timestamp} covers ${item.checkpoint.treeSize} events; the log holds ${count}`,
      where,
      item.checkpoint,
    );
  }
  if (mismatch)
    return fail(
      'leaf-mismatch',
      `The event at leaf ${mismatch.index} (position ${mismatch.position}) is not the one sealed there ` +
        '(no checkpoint covers it yet)',
      {
        leafIndex: mismatch.index,
        position: mismatch.position,
        afterPosition: mismatch.afterPosition,
        exact: true,
      },
      null,
    );
  if (count < storedSize)
    return fail(
      'log-truncated',
      `The log holds ${count} events; ${storedSize} were sealed (no checkpoint covers the missing ones yet)`,
      { leafIndex: count, position: null, afterPosition: previousPosition, exact: true },
      null,
    );
  options.onProgress?.({ events: count, position: previousPosition, checkpointsVerified });
  const last: Checkpoint | null = lastCheckpoint;
  const ownEvent: { index: number; note: string } | null = lastCheckpointEvent;
  const signedNote: string | null = lastNote;
  const ownLeaf = ownEvent !== null && ownEvent.index >= lastGood && ownEvent.note === signedNote ? 1 : 0;
  return {
    ok: true,
    events: count,
    rootHash: frontier.root().toString('base64'),
    checkpointsVerified,
    lastCheckpoint: last && summary(last),
    uncheckpointed: count - lastGood - ownLeaf,
    warnings,
  };
};
