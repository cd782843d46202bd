import fs from 'node:fs';
import path from 'node:path';
import { openSignedNote, parseCheckpointBody } from './checkpoint';
import type { VerifyLogResult } from './verifyLog';
import { messageOf } from '../shared/errors';

/**
 * A witness: the signed tree heads a process saw, kept where the log's writer cannot quietly remove
 * them (LEDGER_WITNESS_DIR, outside the database's host and volume in production). One JSON line per
 * checkpoint in an append-only file, each line written with one `write` and fsync'd. A log that lost
 * a witnessed checkpoint, ends before a witnessed size, or no longer hashes to a witnessed root is
 * not the log that was signed, whatever checkpoints it still holds itself.
 */
const WITNESS_FILE = 'checkpoints.jsonl';

type WitnessedCheckpoint = {
  readonly origin: string;
  readonly treeSize: number;
  /** base64 */
  readonly rootHash: string;
  /** The global position of leaf treeSize − 1. */
  readonly lastPosition: string | null;
  /** The global position of the checkpoint's own event in the log (null when not known). */
  readonly position: string | null;
  readonly signedAt: string;
  /** The signed note (checkpoint body and signature). */
  readonly note: string;
};

type WitnessEntry = WitnessedCheckpoint & { readonly source: string; readonly line: number };

/** The witness file of a directory (or the file itself, when given one: a copy an auditor kept). */
export const witnessFile = (dirOrFile: string): string => {
  try {
    if (fs.statSync(dirOrFile).isFile()) return dirOrFile;
  } catch {
    // Not there yet: a directory to create.
  }
  return path.join(dirOrFile, WITNESS_FILE);
};

/** Appends one checkpoint to the witness in `dir` (created mode 0700, the file 0600), fsync'd. */
export const appendWitness = (dir: string, checkpoint: WitnessedCheckpoint): void => {
  const file = witnessFile(dir);
  const existed = fs.existsSync(file);
  if (!existed) fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const line =
    JSON.stringify({
      v: 1,
      origin: checkpoint.origin,
      tree_size: checkpoint.treeSize,
      root_hash: checkpoint.rootHash,
      last_position: checkpoint.lastPosition,
      position: checkpoint.position,
      signed_at: checkpoint.signedAt,
      note: checkpoint.note,
    }) + '\n';
  const fd = fs.openSync(file, 'a', 0o600);
  try {
    fs.writeSync(fd, line);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (!existed) {
    // The new file's name is durable only once its directory is.
    const dirFd = fs.openSync(path.dirname(file), 'r');
    try {
      fs.fsyncSync(dirFd);
    } catch {
      // Some filesystems refuse fsync on a directory; the line itself is synced.
    } finally {
      fs.closeSync(dirFd);
    }
  }
};

const str = (v: unknown) => (typeof v === 'string' ? v : null);

/**
 * The checkpoints a witness holds, in the order they were written; a missing witness holds none.
 * A line that does not parse (a write torn by a crash) is skipped with a warning.
 */
export const readWitness = (dirOrFile: string): { entries: WitnessEntry[]; warnings: string[] } => {
  const file = witnessFile(dirOrFile);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], warnings: [] };
    throw error;
  }
  const entries: WitnessEntry[] = [];
  const warnings: string[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    try {
      const o = JSON.parse(raw) as Record<string, unknown>;
      const note = str(o.note);
      if (!note) throw new Error('no note');
      const body = parseCheckpointBody(openSignedNote(note).text);
      entries.push({
        origin: body.origin,
        treeSize: body.treeSize,
        rootHash: body.rootHash.toString('base64'),
        lastPosition: body.lastPosition === null ? null : String(body.lastPosition),
        position: str(o.position),
        signedAt: body.timestamp,
        note,
        source: file,
        line: i + 1,
      });
    } catch (error) {
      warnings.push(`${file} line ${i + 1} is not a witnessed checkpoint (${messageOf(error)}): skipped`);
    }
  });
  return { entries, warnings };
};

/** The identity of a checkpoint across copies: its size and root. */
const idOf = (c: { treeSize: number; rootHash: string }) => `${c.treeSize}:${c.rootHash}`;

/** The checkpoints of signed notes (notes that do not parse are left to verifyLog to report). */
const checkpointIds = (notes: Iterable<string>): Set<string> => {
  const ids = new Set<string>();
  for (const note of notes) {
    try {
      const body = parseCheckpointBody(openSignedNote(note).text);
      ids.add(idOf({ treeSize: body.treeSize, rootHash: body.rootHash.toString('base64') }));
    } catch {
      // verifyLog reports it.
    }
  }
  return ids;
};

/** The witnessed notes the log does not hold itself, one per checkpoint: verifyLog checks their roots too. */
export const witnessedNotesBeyond = (logNotes: readonly string[], witnessed: readonly WitnessEntry[]) => {
  const seen = checkpointIds(logNotes);
  const notes: string[] = [];
  for (const w of witnessed)
    if (!seen.has(idOf(w))) {
      seen.add(idOf(w));
      notes.push(w.note);
    }
  return notes;
};

type WitnessCheck = {
  /** The checkpoints the log holds (signed notes), as read. */
  readonly logNotes: readonly string[];
  /** Every checkpoint of every witness given. */
  readonly witnessed: readonly WitnessEntry[];
  /** Where the witnesses were read (for the report). */
  readonly sources: readonly string[];
  readonly warnings?: readonly string[];
  /**
   * Checkpoints are signed every this many events (LEDGER_CHECKPOINT_EVENTS): a log of twice as many
   * events holding none lost them. Undefined: no such expectation (checkpoints off).
   */
  readonly checkpointEvery?: number;
};

export type WitnessedResult = VerifyLogResult & {
  readonly witnesses: { readonly sources: readonly string[]; readonly checkpoints: number };
  readonly missingCheckpoints?: readonly {
    treeSize: number;
    rootHash: string;
    signedAt: string;
    position: string | null;
    source: string;
  }[];
};

/**
 * Judges a verification (run over the log's checkpoints and the witnessed ones it lacks, so every
 * witnessed root was recomputed from the log's leaves) against the witnesses: a witnessed
 * checkpoint the log does not hold, or no checkpoint at all in a log long enough to have had some,
 * is a failure, named first; what else the verification found follows in the detail.
 */
export const judgeWithWitnesses = (result: VerifyLogResult, check: WitnessCheck): WitnessedResult => {
  const inLog = checkpointIds(check.logNotes);
  const missing = new Map<string, WitnessEntry>();
  for (const w of check.witnessed) if (!inLog.has(idOf(w)) && !missing.has(idOf(w))) missing.set(idOf(w), w);
  const witnesses = { sources: check.sources, checkpoints: new Set(check.witnessed.map(idOf)).size };
  const warnings = [...result.warnings, ...(check.warnings ?? [])];
  const also = result.ok ? '' : ` Also: ${result.problem}: ${result.detail}`;
  const where = result.ok
    ? {
        leafIndex: result.events,
        position: null,
        afterPosition: null,
        exact: false,
        lastGoodTreeSize: result.events,
      }
    : {
        leafIndex: result.leafIndex,
        position: result.position,
        afterPosition: result.afterPosition,
        exact: result.exact,
        lastGoodTreeSize: result.lastGoodTreeSize,
      };
  if (missing.size > 0) {
    const list = [...missing.values()].sort((a, b) => a.treeSize - b.treeSize);
    const first = list[0]!;
    const named = list
      .slice(0, 5)
      .map(
        (m) =>
          `tree size ${m.treeSize} (root ${m.rootHash}, signed at ${m.signedAt}${m.position ? `, its event at position ${m.position}` : ''})`,
      )
      .join('; ');
    return {
      ok: false,
      problem: 'checkpoint-missing',
      detail:
        `The log lacks ${list.length} checkpoint${list.length === 1 ? '' : 's'} a witness holds (${first.source}): ${named}` +
        `${list.length > 5 ? `; and ${list.length - 5} more` : ''}: checkpoints were deleted from the log.${also}`,
      ...where,
      checkpoint: { treeSize: first.treeSize, rootHash: first.rootHash, timestamp: first.signedAt },
      events: result.events,
      warnings,
      witnesses,
      missingCheckpoints: list.map((m) => ({
        treeSize: m.treeSize,
        rootHash: m.rootHash,
        signedAt: m.signedAt,
        position: m.position,
        source: m.source,
      })),
    };
  }
  if (
    check.logNotes.length === 0 &&
    check.checkpointEvery !== undefined &&
    result.events >= 2 * check.checkpointEvery
  )
    return {
      ok: false,
      problem: 'no-checkpoints',
      detail:
        `The log holds ${result.events} events and no checkpoint, though one is signed every ${check.checkpointEvery} events: ` +
        `its checkpoints were deleted, or it was never signed (verify against a witness: --witness <dir>).${also}`,
      ...where,
      checkpoint: null,
      events: result.events,
      warnings,
      witnesses,
    };
  return { ...result, warnings, witnesses };
};
