import path from 'node:path';
import type { LedgerCheckpointSigned, RecordedEvent } from '../../events';
import type { AppContext } from '../context';
import type { Aggregate } from '../eventlog/commands';
import { StreamTampered, type EventLog } from '../eventlog/types';
import {
  appendWitness,
  checkpointDue,
  createProofBuilder,
  judgeWithWitnesses,
  leafText,
  readWitness,
  signCheckpoint,
  verifyLog,
  witnessedNotesBeyond,
  witnessFile,
  type LeafHashes,
  type PublicKeyInput,
  type RecordedEventLike,
  type SigningKey,
  type VerifyProgress,
  type WitnessedResult,
} from '../ledger';
import { notFound } from '../shared/errors';
import { maskSecrets } from '../shared/secrets';
import { withoutIdentifyingFields } from '../ledger/sealing';
import { duckLeafHashes, leafOfPosition, treeHead, type TreeHead } from './ledgerProjection';

const CHECKPOINT_STREAM = 'ledger-checkpoints';

/** Whether masking would change the event: it holds a secret somewhere in its data or metadata. */
const holdsSecret = (event: RecordedEvent) => {
  const json = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x));
  // A session's id, a token's id: the public parts the log keeps in clear (src/ledger/sealing.ts).
  const data = withoutIdentifyingFields(event.data);
  return json(maskSecrets(data)) !== json(data) || json(maskSecrets(event.meta)) !== json(event.meta);
};

type Signed = LedgerCheckpointSigned['data'] & { position: bigint };
type CheckpointState = { readonly checkpoints: readonly Signed[] };

const checkpointAggregate: Aggregate<CheckpointState> = {
  initialState: () => ({ checkpoints: [] }),
  evolve: (state, event: RecordedEvent) =>
    event.type === 'LedgerCheckpointSigned'
      ? { checkpoints: [...state.checkpoints, { ...event.data, position: event.meta.position }] }
      : state,
};

/**
 * Every event of the log in the order it is tailed (the tree's leaf order), page by page; each page
 * is asked for while the one before is verified, so the store reads (SQLite's thread pool,
 * PostgreSQL's server) beside the hashing rather than before it.
 */
async function* tailedEvents(
  log: EventLog,
  pageSize = 5000,
  signal?: AbortSignal,
): AsyncGenerator<RecordedEventLike[]> {
  let next = log.readAll({ position: 0n, transactionId: null }, pageSize);
  try {
    for (;;) {
      // A client that went away stops the reading (a whole-log check can take minutes).
      signal?.throwIfAborted();
      const page = await next;
      if (page.events.length === 0) return;
      next = log.readAll(page.cursor, pageSize);
      yield page.events;
    }
  } finally {
    // A verification that ended early (a failure, an abort) leaves no read running on the log it closes.
    await next.catch(() => undefined);
  }
}

/** The signed checkpoints the log holds, oldest first. */
const checkpointNotes = async (log: EventLog) =>
  (await log.readStream(CHECKPOINT_STREAM, 0n)).events.flatMap((e) =>
    e.type === 'LedgerCheckpointSigned' ? [e.data.note] : [],
  );

type WitnessOptions = {
  /** Witnesses to compare the log with (directories, or witness files an auditor kept). */
  readonly witnesses?: readonly string[];
  /** LEDGER_CHECKPOINT_EVENTS: a log twice as long holding no checkpoint lost them. */
  readonly checkpointEvery?: number;
  /**
   * The leaf hashes the read model recorded (`ledger_leaves`): with them a changed event is named by
   * its own position, once they are shown to rebuild the checkpoint it fails (src/ledger/verifyLog.ts).
   */
  readonly leafHashes?: LeafHashes;
};

/** The note a checkpoint event of this service carries (its own leaf is vouched for by it). */
const checkpointNoteOf = (event: RecordedEventLike) => {
  if (event.type !== 'LedgerCheckpointSigned' || event.meta.stream !== CHECKPOINT_STREAM) return undefined;
  const note = (event.data as { note?: unknown } | null)?.note;
  return typeof note === 'string' ? note : undefined;
};

/**
 * Recomputes the tree from the log and checks every checkpoint (what `npm run verify` runs), and
 * every checkpoint the witnesses hold: each must be in the log, and the log's leaves must hash to
 * its root at its size (src/ledger/witness.ts).
 */
export const verifyWholeLog = async (
  log: EventLog,
  trusted: readonly PublicKeyInput[],
  origin: string,
  progress: { onProgress?: (p: VerifyProgress) => void; every?: number; signal?: AbortSignal } = {},
  witness: WitnessOptions = {},
): Promise<WitnessedResult> => {
  // The witnesses first: whatever they hold was in the log before (it is witnessed once appended),
  // so a checkpoint signed meanwhile is in the log read next, never reported missing.
  const read = (witness.witnesses ?? []).map((w) => ({ file: witnessFile(w), ...readWitness(w) }));
  const witnessed = read.flatMap((r) => r.entries);
  const logNotes = await checkpointNotes(log);
  const result = await verifyLog(
    tailedEvents(log, 5000, progress.signal),
    [...logNotes, ...witnessedNotesBeyond(logNotes, witnessed)],
    trusted,
    {
      origin,
      onProgress: progress.onProgress,
      progressEvery: progress.every,
      leafHashes: witness.leafHashes,
      checkpointNoteOf,
    },
  );
  return judgeWithWitnesses(result, {
    logNotes,
    witnessed,
    sources: read.map((r) => r.file),
    warnings: read.flatMap((r) => r.warnings),
    checkpointEvery: witness.checkpointEvery,
  });
};

/** A verification result as JSON (positions as numbers, hashes as they are). */
const presentVerification = (result: WitnessedResult) =>
  JSON.parse(JSON.stringify(result, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))) as Record<
    string,
    unknown
  >;

/** A server path as an answer may name it: relative to DATA_DIR, or its last component when elsewhere. */
const shownPath = (file: string, dataDir: string) => {
  const relative = path.relative(path.resolve(dataDir), path.resolve(file));
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative)
    ? relative
    : path.basename(file);
};

/** A JSON answer with each of `paths` (and DATA_DIR itself) shown as `shownPath` shows it, in every string. */
const withoutServerPaths = <T>(answer: T, paths: readonly string[], dataDir: string): T => {
  // Longest first: a file's path before its directory's.
  const swaps = [...new Set([...paths, dataDir].map((p) => path.resolve(p)))]
    .sort((a, b) => b.length - a.length)
    .map((p) => [p, p === path.resolve(dataDir) ? 'DATA_DIR' : shownPath(p, dataDir)] as const);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return swaps.reduce((text, [from, to]) => text.split(from).join(to), v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(answer) as T;
};

type LedgerOptions = {
  readonly key: SigningKey;
  readonly trusted: readonly PublicKeyInput[];
  readonly origin: string;
  /** A checkpoint once this many events are unsigned … */
  readonly everyEvents: number;
  /** … or once the oldest unsigned event is this old. */
  readonly everyMs: number;
  /** Sign what is unsigned at a clean stop. */
  readonly onStop: boolean;
  /** LEDGER_WITNESS_DIR: every checkpoint this process sees is appended there, and verify compares with it. */
  readonly witnessDir?: string;
};

type Witnessed = { readonly treeSize: number; readonly rootHash: string };

/**
 * The witness (LEDGER_WITNESS_DIR) as the signer uses it: `append` adds every checkpoint of the log
 * it does not hold yet (signed here or elsewhere); `latest` is the largest tree it holds for this
 * origin (read from the file once, then kept as appended). Both no-ops without one.
 */
const witnessAppender = (ctx: AppContext, options: LedgerOptions) => {
  // The largest tree the witness holds (read once, lazily): what is beyond it is appended.
  let witnessed: Witnessed | null | undefined;
  const latest = (): Witnessed | null => {
    const dir = options.witnessDir;
    if (!dir) return null;
    if (witnessed === undefined) {
      const entries = readWitness(dir).entries.filter((e) => e.origin === options.origin);
      witnessed = entries.reduce<Witnessed | null>(
        (max, e) =>
          e.treeSize > (max?.treeSize ?? 0) ? { treeSize: e.treeSize, rootHash: e.rootHash } : max,
        null,
      );
    }
    return witnessed;
  };
  const append = (seen: readonly Signed[]) => {
    const dir = options.witnessDir;
    if (!dir) return;
    try {
      for (const c of seen) {
        if (c.treeSize <= (latest()?.treeSize ?? 0)) continue;
        appendWitness(dir, {
          origin: options.origin,
          treeSize: c.treeSize,
          rootHash: c.rootHash,
          lastPosition: c.lastPosition,
          position: c.position.toString(),
          signedAt: c.signedAt,
          note: c.note,
        });
        witnessed = { treeSize: c.treeSize, rootHash: c.rootHash };
      }
    } catch (err) {
      // Tried again at the next checkpoint tick: what is not witnessed yet stays beyond the latest.
      ctx.logger.warn({ err, witnessDir: dir }, 'ledger checkpoint not witnessed');
    }
  };
  return { append, latest };
};

/**
 * The events of the tree not yet signed. The latest checkpoint's own event is a leaf past the tree
 * it signed, but never a reason to sign again (an idle log would sign forever); events recorded
 * while it was being signed are.
 */
const unsignedEvents = (head: TreeHead & { lastPosition: bigint }, latest: Signed | undefined) => {
  const ownLeaf = latest !== undefined && head.lastPosition >= latest.position ? 1 : 0;
  return head.size - (latest?.treeSize ?? 0) - ownLeaf;
};

/** The checkpoint event's data: the tree head signed with the service's key. */
const signedHead = (
  options: LedgerOptions,
  head: TreeHead & { lastPosition: bigint },
  timestamp: string,
): LedgerCheckpointSigned['data'] => ({
  treeSize: head.size,
  rootHash: head.rootHash,
  lastPosition: head.lastPosition.toString(),
  note: signCheckpoint(
    {
      origin: options.origin,
      treeSize: head.size,
      rootHash: Buffer.from(head.rootHash, 'base64'),
      timestamp,
      lastPosition: head.lastPosition,
    },
    options.key,
  ),
  keyFingerprint: options.key.fingerprint,
  signedAt: timestamp,
});

const b64 = (h: Buffer) => h.toString('base64');

type ProofBuilder = ReturnType<typeof createProofBuilder>;

/** RFC 9162 inclusion proof of the event at `position` in the latest checkpoint's tree. */
const inclusionProof = async (
  ctx: AppContext,
  proofs: ProofBuilder,
  latestCheckpoint: () => Promise<Signed>,
  position: bigint,
  everyMs: number,
) => {
  const leaf = await leafOfPosition(ctx.duck, position);
  if (!leaf) throw notFound(`No event at position ${position} is in the tree yet`, 'No such leaf');
  const latest = await latestCheckpoint();
  if (leaf.index >= latest.treeSize)
    throw notFound(
      `The event at position ${position} (leaf ${leaf.index}) is after the latest checkpoint (size ${latest.treeSize}); the next one comes within ${Math.round(everyMs / 1000)} s`,
      'Not checkpointed yet',
    );
  const proof = await proofs.inclusionProof(leaf.index, latest.treeSize);
  const event = await ctx.log.eventAt(position);
  return {
    position: Number(position),
    leaf_index: leaf.index,
    // The canonical leaf, so the auditor can read the event and hash it themselves; left out for
    // an event that holds a secret (secrets are in the log as sent, never in an answer).
    ...(event && !holdsSecret(event) ? { leaf: leafText(event) } : {}),
    leaf_hash: b64(Buffer.from(leaf.hash, 'hex')),
    tree_size: latest.treeSize,
    root_hash: latest.rootHash,
    inclusion_path: proof.map(b64),
    checkpoint: latest.note,
  };
};

/** RFC 9162 consistency proof between two checkpointed tree sizes (to: the latest by default). */
const consistencyProof = async (proofs: ProofBuilder, all: readonly Signed[], from: number, to?: number) => {
  const latest = all.at(-1);
  if (!latest) throw notFound('The log has no checkpoint yet', 'No checkpoint');
  const target = to === undefined ? latest : all.find((c) => c.treeSize === to);
  const origin = all.find((c) => c.treeSize === from);
  if (!origin || !target)
    throw notFound(
      `Both sizes must be checkpoints: known sizes are ${all.map((c) => c.treeSize).join(', ')}`,
      'No such checkpoint',
    );
  const proof = await proofs.consistencyProof(origin.treeSize, target.treeSize);
  return {
    first: origin.treeSize,
    second: target.treeSize,
    first_root: origin.rootHash,
    second_root: target.rootHash,
    consistency_path: proof.map(b64),
    first_checkpoint: origin.note,
    second_checkpoint: target.note,
  };
};

/**
 * What the witness contradicts in the tree about to be signed, or null when nothing: the tree must
 * be at least the witnessed size and extend it (its first witnessed-size leaves, as the read model
 * holds them, hash to the witnessed root: what a consistency proof between the two proves). A log
 * cut below the witnessed size, or changed within it, gives a read model (rebuilt from that log)
 * whose tree is not the one the witness saw.
 */
const witnessContradiction = async (proofs: ProofBuilder, witnessed: Witnessed, head: TreeHead) => {
  const saw = `the witness holds a checkpoint of tree size ${witnessed.treeSize} (root ${witnessed.rootHash})`;
  if (head.size < witnessed.treeSize)
    return `${saw}; the tree to sign has ${head.size} leaves, ${witnessed.treeSize - head.size} fewer: the log was truncated after the witness saw it`;
  if (b64(await proofs.rootAt(witnessed.treeSize)) === witnessed.rootHash) return null;
  return `${saw}; the tree to sign has size ${head.size} (root ${head.rootHash}), whose first ${witnessed.treeSize} leaves do not hash to that root: the log was changed (or truncated and written again) after the witness saw it`;
};

/**
 * The ledger in a running service: signs checkpoints of the tree the read model holds (every
 * `everyEvents` events or `everyMs`, and at a clean stop), answers verification and proofs. Any
 * process may sign; the checkpoint stream's decider keeps sizes increasing, so two processes on one
 * PostgreSQL log never sign the same size twice (they must share the signing key).
 */
export const auditLedger = (ctx: AppContext, options: LedgerOptions) => {
  const proofs = createProofBuilder(duckLeafHashes(ctx.duck));
  const witness = witnessAppender(ctx, options);
  let timer: NodeJS.Timeout | undefined;
  let lastSignedAt = Date.now();
  let signing: Promise<unknown> = Promise.resolve();
  /**
   * Set once the log is found changed outside the service (its checkpoint stream lost events, or
   * the witness contradicts the tree): no checkpoint is appended to it, and none is signed over a
   * tree the log no longer vouches for, until a restart on a restored log. `verify` names what
   * changed.
   */
  let tampered: Error | undefined;
  /** Stops all signing in this process, saying why once (pino error). */
  const stopSigning = (err: Error, fields: Record<string, unknown>, why: string) => {
    tampered = err;
    ctx.logger.error(
      { err, ...fields },
      `ledger: ${why}: this process signs no more checkpoints (npm run verify names what changed)`,
    );
    return null;
  };

  const checkpoints = async () =>
    (await ctx.commands.load(CHECKPOINT_STREAM, checkpointAggregate)).state.checkpoints;

  /** Signs the tree as the read model holds it when due (always when `force`); the new checkpoint, or null. */
  const signWhenDue = async (force: boolean) => {
    if (tampered) return null;
    const head = await treeHead(ctx.duck);
    const seen = await checkpoints();
    witness.append(seen);
    const lastPosition = head.lastPosition;
    if (head.size === 0 || lastPosition === null) return null;
    const unsigned = unsignedEvents({ ...head, lastPosition }, seen.at(-1));
    if (unsigned <= 0) return null;
    const since = { eventsSinceCheckpoint: unsigned, msSinceCheckpoint: Date.now() - lastSignedAt };
    if (!force && !checkpointDue(since, options)) return null;
    // Never a checkpoint over a log the witness contradicts: a log cut (events, their checkpoints
    // and their streams' rows deleted) leaves no conflict in the checkpoint stream, and its read
    // model, rebuilt, holds the shortened tree. Checked only here, past the log's latest
    // checkpoint: on an honest log that is at or past every witnessed size, so a read model still
    // catching up never trips it. Without a witness (LEDGER_WITNESS_DIR unset) there is nothing to
    // compare with and signing is as before.
    const witnessed = witness.latest();
    const contradiction = witnessed && (await witnessContradiction(proofs, witnessed, head));
    if (witnessed && contradiction)
      return stopSigning(
        new Error(contradiction),
        { witnessedSize: witnessed.treeSize, treeSize: head.size },
        `the witness contradicts the tree (${contradiction})`,
      );
    const data = signedHead(options, { ...head, lastPosition }, ctx.clock().toISOString());
    const outcome = await ctx.commands
      .run(CHECKPOINT_STREAM, checkpointAggregate, (state) =>
        (state.checkpoints.at(-1)?.treeSize ?? 0) >= head.size
          ? []
          : [{ type: 'LedgerCheckpointSigned' as const, data }],
      )
      .catch((err: unknown) => {
        if (!(err instanceof StreamTampered)) throw err;
        return stopSigning(
          err,
          { stream: err.stream, version: err.version.toString() },
          `the log's checkpoint stream was changed outside the service (stream ${err.stream}: its events end at version ${err.version}, the log records another; checkpoint events were removed after they were written)`,
        );
      });
    if (outcome === null) return null;
    lastSignedAt = Date.now();
    if (outcome.events.length === 0) return null;
    witness.append(await checkpoints());
    await ctx.projections.waitFor(outcome.lastPosition!, ctx.config.projectionWaitMs).catch(() => undefined);
    return data;
  };

  /** One signing at a time, in the order asked. */
  const checkpoint = (force = false) => {
    const run = signing.then(() => signWhenDue(force));
    signing = run.catch(() => undefined);
    return run;
  };

  const latestCheckpoint = async () => {
    const latest = (await checkpoints()).at(-1);
    if (!latest) throw notFound('The log has no checkpoint yet', 'No checkpoint');
    return latest;
  };

  return {
    checkpoint,
    checkpoints,
    start: () => {
      timer = setInterval(
        () =>
          void checkpoint().catch((err: unknown) => ctx.logger.warn({ err }, 'ledger checkpoint not signed')),
        Math.min(1000, options.everyMs),
      );
      timer.unref();
    },
    /**
     * Stops the timer and signs what is unsigned (a clean shutdown leaves a checkpoint). The tree is
     * the read model's: it first applies every event the log holds (writes answered ahead of it
     * included), so the checkpoint covers the whole log but its own event.
     */
    stop: async () => {
      if (timer) clearInterval(timer);
      if (!options.onStop || tampered) return;
      await ctx.projections
        .catchUp()
        .catch((err: unknown) =>
          ctx.logger.warn(
            { err },
            'ledger: the read model did not catch up before the checkpoint at shutdown',
          ),
        );
      await checkpoint(true).catch((err: unknown) =>
        ctx.logger.warn({ err }, 'ledger checkpoint at shutdown not signed'),
      );
    },
    // Answered over HTTP: the witness files are named relative to DATA_DIR (by their name alone
    // when elsewhere), never by the server's absolute paths.
    verify: async (progress: Parameters<typeof verifyWholeLog>[3] = {}) => {
      const result = await verifyWholeLog(ctx.log, options.trusted, options.origin, progress, {
        witnesses: options.witnessDir ? [options.witnessDir] : [],
        checkpointEvery: options.everyEvents,
        leafHashes: duckLeafHashes(ctx.duck),
      });
      return withoutServerPaths(
        presentVerification(result),
        [...result.witnesses.sources, ...(options.witnessDir ? [options.witnessDir] : [])],
        ctx.config.dataDir,
      );
    },
    /** How many events the log holds now (the total a streamed verification reports against). */
    logSize: async () => (await ctx.log.head()).events,
    publicKey: () => ({
      pem: options.key.publicKeyPem,
      fingerprint: options.key.fingerprint,
      origin: options.origin,
    }),
    inclusion: (position: bigint) => inclusionProof(ctx, proofs, latestCheckpoint, position, options.everyMs),
    consistency: async (from: number, to?: number) => consistencyProof(proofs, await checkpoints(), from, to),
  };
};

export type AuditLedger = ReturnType<typeof auditLedger>;
