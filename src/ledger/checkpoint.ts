import crypto, { type KeyObject } from 'node:crypto';
import { EMPTY_ROOT, HASH_SIZE, sameHash, type Hash } from './hashing';
import { noteKeyId, parsePublicKey, rawPublicKey, type PublicKeyInput, type SigningKey } from './keys';
import { messageOf } from '../shared/errors';

/**
 * A tree head: the log had `treeSize` events, their tree's root was `rootHash`, at `timestamp`.
 * `lastPosition` is the global position of leaf treeSize − 1, so an auditor can tell which events a
 * checkpoint covers without counting (null for the empty tree).
 */
export type Checkpoint = {
  readonly origin: string;
  readonly treeSize: number;
  readonly rootHash: Hash;
  /** ISO-8601 UTC with milliseconds, as Date.toISOString writes it. */
  readonly timestamp: string;
  readonly lastPosition: bigint | null;
};

class CheckpointFormatError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'CheckpointFormatError';
  }
}

const ORIGIN = /^[^\s+]+$/u;
const DECIMAL = /^(0|[1-9][0-9]*)$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const STD_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** c2sp.org/signed-note: no control characters other than newline. */
const hasControl = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 && code !== 0x0a) return true;
  }
  return false;
};
const SIGNATURE_LINE = /^\u2014 (\S+) ([A-Za-z0-9+/]+={0,2})$/u;
const MAX_NOTE_BYTES = 64 * 1024;
const MAX_SIGNATURES = 16;

const requireOrigin = (origin: string) => {
  if (!ORIGIN.test(origin) || hasControl(origin))
    throw new CheckpointFormatError(
      `The origin ${JSON.stringify(origin)} must be non-empty, without spaces or "+"`,
    );
};

/**
 * The note text (c2sp.org/tlog-checkpoint): origin, tree size, base64 root, then two extension
 * lines of ours, `time <ISO-8601>` and `last-position <decimal>` (omitted for the empty tree). Every
 * line ends with a newline; the signature covers exactly these bytes.
 */
const checkpointBody = (checkpoint: Checkpoint): string => {
  requireOrigin(checkpoint.origin);
  if (!Number.isSafeInteger(checkpoint.treeSize) || checkpoint.treeSize < 0)
    throw new CheckpointFormatError(`Tree size ${checkpoint.treeSize} is not a size`);
  if (checkpoint.rootHash.length !== HASH_SIZE) throw new CheckpointFormatError('A root hash has 32 bytes');
  if (!ISO_UTC.test(checkpoint.timestamp))
    throw new CheckpointFormatError('The timestamp must be ISO-8601 UTC');
  return (
    `${checkpoint.origin}\n${checkpoint.treeSize}\n${checkpoint.rootHash.toString('base64')}\n` +
    `time ${checkpoint.timestamp}\n` +
    (checkpoint.lastPosition === null ? '' : `last-position ${checkpoint.lastPosition.toString()}\n`)
  );
};

export const parseCheckpointBody = (body: string): Checkpoint => {
  if (!body.endsWith('\n')) throw new CheckpointFormatError('The checkpoint text must end with a newline');
  const lines = body.slice(0, -1).split('\n');
  const [origin = '', size = '', root = '', time = '', ...rest] = lines;
  requireOrigin(origin);
  if (!DECIMAL.test(size) || !Number.isSafeInteger(Number(size)))
    throw new CheckpointFormatError(`Line 2 must be the tree size in decimal, not ${JSON.stringify(size)}`);
  const rootHash = Buffer.from(root, 'base64');
  if (!STD_BASE64.test(root) || rootHash.length !== HASH_SIZE || rootHash.toString('base64') !== root)
    throw new CheckpointFormatError('Line 3 must be the base64 of a 32-byte root hash');
  const timestamp = time.startsWith('time ') ? time.slice(5) : '';
  if (!ISO_UTC.test(timestamp) || Number.isNaN(Date.parse(timestamp)))
    throw new CheckpointFormatError('Line 4 must be "time <ISO-8601 UTC>"');
  const treeSize = Number(size);
  let lastPosition: bigint | null = null;
  if (rest.length > 1) throw new CheckpointFormatError('Unknown extension lines after last-position');
  if (rest.length === 1) {
    const value = rest[0]!.startsWith('last-position ') ? rest[0]!.slice('last-position '.length) : '';
    if (!DECIMAL.test(value)) throw new CheckpointFormatError('Line 5 must be "last-position <decimal>"');
    lastPosition = BigInt(value);
  }
  if ((treeSize === 0) !== (lastPosition === null))
    throw new CheckpointFormatError('last-position is present exactly when the tree is not empty');
  if (treeSize === 0 && !sameHash(rootHash, EMPTY_ROOT))
    throw new CheckpointFormatError('The empty tree has the root SHA-256("")');
  return { origin, treeSize, rootHash, timestamp, lastPosition };
};

type NoteSignature = { readonly keyName: string; readonly keyId: Buffer; readonly signature: Buffer };

/** Splits a signed note (c2sp.org/signed-note) into its text and signature lines. */
export const openSignedNote = (note: string): { text: string; signatures: NoteSignature[] } => {
  if (Buffer.byteLength(note, 'utf8') > MAX_NOTE_BYTES)
    throw new CheckpointFormatError('The note is too large');
  if (hasControl(note)) throw new CheckpointFormatError('A note holds no control characters but newlines');
  if (!note.endsWith('\n')) throw new CheckpointFormatError('A signed note ends with a newline');
  const split = note.lastIndexOf('\n\n');
  if (split < 0)
    throw new CheckpointFormatError('A signed note separates its text from signatures by a blank line');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new CheckpointFormatError('Too many signatures');
  const signatures = lines.map((line): NoteSignature => {
    const match = SIGNATURE_LINE.exec(line);
    if (!match) throw new CheckpointFormatError(`Not a signature line: ${JSON.stringify(line)}`);
    const bytes = Buffer.from(match[2]!, 'base64');
    // Node's decoder ignores stray bits in the last character: only the canonical encoding is accepted.
    if (bytes.toString('base64') !== match[2])
      throw new CheckpointFormatError('A signature is not canonical base64');
    if (bytes.length < 5) throw new CheckpointFormatError('A signature holds a key ID and a signature');
    return { keyName: match[1]!, keyId: bytes.subarray(0, 4), signature: bytes.subarray(4) };
  });
  return { text, signatures };
};

/** The checkpoint as a signed note: its text, a blank line, `— <origin> base64(key ID || Ed25519 signature)`. */
export const signCheckpoint = (checkpoint: Checkpoint, key: SigningKey): string => {
  const text = checkpointBody(checkpoint);
  const signature = crypto.sign(null, Buffer.from(text, 'utf8'), key.privateKey);
  const keyId = noteKeyId(checkpoint.origin, key.publicKeyRaw);
  return `${text}\n\u2014 ${checkpoint.origin} ${Buffer.concat([keyId, signature]).toString('base64')}\n`;
};

type CheckpointVerification =
  | { readonly ok: true; readonly checkpoint: Checkpoint; readonly keyId: string }
  | { readonly ok: false; readonly reason: string };

/**
 * Verifies a signed checkpoint against trusted public keys (several during a key rotation). As the
 * signed-note spec says: signatures by unknown keys are ignored, one by a known key that fails
 * rejects the note, and at least one known key must have signed. The signing key's name must be the
 * checkpoint's origin.
 */
export const verifyCheckpoint = (
  note: string,
  trusted: PublicKeyInput | readonly PublicKeyInput[],
): CheckpointVerification => {
  let opened: ReturnType<typeof openSignedNote>;
  let checkpoint: Checkpoint;
  try {
    opened = openSignedNote(note);
    checkpoint = parseCheckpointBody(opened.text);
  } catch (error) {
    return { ok: false, reason: messageOf(error) };
  }
  const keys: KeyObject[] = (Array.isArray(trusted) ? trusted : [trusted]).map((k: PublicKeyInput) =>
    parsePublicKey(k),
  );
  const text = Buffer.from(opened.text, 'utf8');
  let verifiedBy: string | null = null;
  for (const line of opened.signatures) {
    if (line.keyName !== checkpoint.origin) continue;
    for (const key of keys) {
      if (!noteKeyId(line.keyName, rawPublicKey(key)).equals(line.keyId)) continue;
      if (!crypto.verify(null, text, key, line.signature))
        return { ok: false, reason: `The signature by key ${line.keyId.toString('hex')} does not verify` };
      verifiedBy = line.keyId.toString('hex');
    }
  }
  if (verifiedBy === null)
    return { ok: false, reason: `No signature by a trusted key for ${checkpoint.origin}` };
  return { ok: true, checkpoint, keyId: verifiedBy };
};
