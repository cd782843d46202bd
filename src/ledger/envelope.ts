import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The cryptography of shredding (see shredding.ts): master and data keys, wrapping a data key under
 * a master key, and the `enc:v1:` form of one encrypted secret. Functions over keys (only loading the
 * master key touches a file); where wrapped keys are kept is dataKeyStore.ts, and what services call
 * is secretVault.ts.
 */

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const ALG = 'aes-256-gcm';
/** Key ids appear inside `enc:v1:<kid>:…` and as file names: no colons, no slashes. */
const KID = /^[A-Za-z0-9_.-]{1,128}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const ENCRYPTED = /^enc:v1:([A-Za-z0-9_.-]{1,128}):([A-Za-z0-9_-]+)$/;
const WRAPPED = /^wrap:v1:([A-Za-z0-9_.-]{1,128}):([A-Za-z0-9_-]+)$/;

type SecretProblem = 'malformed' | 'wrong-key' | 'tampered' | 'forgotten';

/** A secret that cannot be read: malformed text, the wrong key, altered bytes, or a destroyed key. */
export class SecretUnavailableError extends Error {
  constructor(
    readonly problem: SecretProblem,
    detail: string,
  ) {
    super(detail);
    this.name = 'SecretUnavailableError';
  }
}

export type MasterKey = { readonly kid: string; readonly key: Buffer };
export type DataKey = { readonly kid: string; readonly key: Buffer };

/** Key ids name files in the key store too (dataKeyStore.ts), so it checks them the same way. */
export const requireKid = (kid: string) => {
  if (!KID.test(kid)) throw new Error(`Key id ${JSON.stringify(kid)} must be 1-128 of A-Z a-z 0-9 _ . -`);
};

const requireKey = (key: Buffer, what: string) => {
  if (key.length !== KEY_BYTES) throw new Error(`${what} has ${KEY_BYTES} bytes, not ${key.length}`);
};

/** A master key's id: derived from the key by HMAC, so it names the key without revealing it. */
const masterKeyId = (key: Buffer): string =>
  'mk-' + crypto.createHmac('sha256', key).update('mindledger master key id').digest('hex').slice(0, 16);

export const masterKeyFrom = (key: Buffer): MasterKey => {
  requireKey(key, 'A master key');
  return { kid: masterKeyId(key), key: Buffer.from(key) };
};

const decodeBase64Key = (text: string): Buffer | null => {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return null;
  const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === KEY_BYTES ? bytes : null;
};

/**
 * Whether a setting is written as a key is: the base64 of 32 bytes, padded (`…=`, the standard
 * alphabet, as `openssl rand -base64 32` writes it) or in the URL-safe alphabet (no `/`). Unpadded
 * standard base64 with a `/` in it reads as well as a path: a key is then written padded.
 */
export const looksLikeKeyText = (text: string): boolean =>
  (/^[A-Za-z0-9+/]{43}=$/.test(text) ||
    /^[A-Za-z0-9_-]{43}=?$/.test(text) ||
    /^[A-Za-z0-9+]{43}$/.test(text)) &&
  decodeBase64Key(text) !== null;

/** Whether a setting that is no key is written as a file's path is: `/…`, `./…`, `../…`, `~…`, any `/`. */
export const looksLikePath = (text: string): boolean => {
  const t = text.trim();
  return !looksLikeKeyText(t) && (/^(\/|\.{1,2}\/|~)/.test(t) || t.includes('/'));
};

/** The prefix that makes a master key setting a file's path (`file:/var/lib/mindledger/master-key`). */
export const MASTER_KEY_FILE_PREFIX = 'file:';

/**
 * The master key from configuration: `file:<path>` names a file holding the base64 of 32 bytes (a
 * path that does not exist yet gets a new random key, written with mode 0600, exclusively, so two
 * processes starting together share one key); anything else is the key itself, base64 of 32 bytes.
 * How the setting is given says which: a path is never read as a key because of its shape (a data
 * directory whose key file's path was 43 base64 characters once made the path the key).
 */
export const loadOrCreateMasterKey = (setting: string): MasterKey => {
  if (!setting.startsWith(MASTER_KEY_FILE_PREFIX)) {
    const inline = decodeBase64Key(setting);
    if (!inline)
      throw new Error(
        `A master key is given as the base64 of 32 bytes, or as ${MASTER_KEY_FILE_PREFIX}<path> of its file (LEDGER_MASTER_KEY_FILE=<path>); this setting is neither`,
      );
    return masterKeyFrom(inline);
  }
  return loadOrCreateMasterKeyFile(setting.slice(MASTER_KEY_FILE_PREFIX.length));
};

/** The master key in a file (created with a new random key when the file does not exist). */
export const loadOrCreateMasterKeyFile = (keyFile: string): MasterKey => {
  const file = path.resolve(keyFile);
  const readExisting = () => {
    const key = decodeBase64Key(fs.readFileSync(file, 'utf8'));
    if (!key) throw new Error(`${file} does not hold the base64 of a 32-byte key`);
    return masterKeyFrom(key);
  };
  if (fs.existsSync(file)) return readExisting();
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = crypto.randomBytes(KEY_BYTES);
  try {
    fs.writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readExisting();
    throw error;
  }
  return masterKeyFrom(key);
};

export const generateDataKey = (kid: string = crypto.randomUUID()): DataKey => {
  requireKid(kid);
  return { kid, key: crypto.randomBytes(KEY_BYTES) };
};

const seal = (key: Buffer, plaintext: Buffer, aad: string): Buffer => {
  const nonce = crypto.randomBytes(NONCE_BYTES);
  const cipher = crypto.createCipheriv(ALG, key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, ct, cipher.getAuthTag()]);
};

const open = (key: Buffer, sealed: Buffer, aad: string, what: string): Buffer => {
  if (sealed.length < NONCE_BYTES + TAG_BYTES)
    throw new SecretUnavailableError('malformed', `${what} is too short`);
  const decipher = crypto.createDecipheriv(ALG, key, sealed.subarray(0, NONCE_BYTES), {
    authTagLength: TAG_BYTES,
  });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw new SecretUnavailableError('tampered', `${what} fails authentication: altered, or not of this key`);
  }
};

/**
 * `wrap:v1:<master kid>:<base64url(nonce || AES-256-GCM(data key) || tag)>`, the data key's id bound
 * as associated data: a wrapped key copied to another id does not unwrap.
 */
export const wrapDataKey = (dataKey: DataKey, master: MasterKey): string => {
  requireKid(dataKey.kid);
  requireKey(dataKey.key, 'A data key');
  const header = `wrap:v1:${master.kid}`;
  return `${header}:${seal(master.key, dataKey.key, `${header}:${dataKey.kid}`).toString('base64url')}`;
};

/** Unwraps with whichever of the master keys (current and retired ones) wrapped it. */
export const unwrapDataKey = (
  wrapped: string,
  kid: string,
  masters: MasterKey | readonly MasterKey[],
): DataKey => {
  requireKid(kid);
  const match = WRAPPED.exec(wrapped);
  if (!match) throw new SecretUnavailableError('malformed', 'Not a wrapped key (wrap:v1:<kid>:<base64url>)');
  const [, masterKid = '', payload = ''] = match;
  const master = (Array.isArray(masters) ? masters : [masters]).find((m: MasterKey) => m.kid === masterKid);
  if (!master)
    throw new SecretUnavailableError(
      'wrong-key',
      `Wrapped by master key ${masterKid}, which is not configured`,
    );
  const key = open(
    master.key,
    Buffer.from(payload, 'base64url'),
    `wrap:v1:${masterKid}:${kid}`,
    `Data key ${kid}`,
  );
  if (key.length !== KEY_BYTES)
    throw new SecretUnavailableError('malformed', `Data key ${kid} has the wrong length`);
  return { kid, key };
};

/** Re-wraps a data key under a new master key (rotation: afterwards the old master key can be destroyed). */
export const rewrapDataKey = (wrapped: string, kid: string, from: MasterKey, to: MasterKey): string =>
  wrapDataKey(unwrapDataKey(wrapped, kid, from), to);

/** The parts of an encrypted secret (its string form is what events hold). */
type EncryptedSecret = {
  readonly v: 1;
  readonly alg: 'A256GCM';
  readonly kid: string;
  readonly nonce: Buffer;
  readonly ct: Buffer;
  readonly tag: Buffer;
};

export const isEncryptedSecret = (value: unknown): value is string =>
  typeof value === 'string' && ENCRYPTED.test(value);

export const parseEncryptedSecret = (text: string): EncryptedSecret => {
  const match = ENCRYPTED.exec(text);
  if (!match || !BASE64URL.test(match[2] ?? ''))
    throw new SecretUnavailableError('malformed', 'Not an encrypted secret (enc:v1:<kid>:<base64url>)');
  const [, kid = '', payload = ''] = match;
  const bytes = Buffer.from(payload, 'base64url');
  if (bytes.length < NONCE_BYTES + TAG_BYTES)
    throw new SecretUnavailableError('malformed', 'The secret is too short');
  return {
    v: 1,
    alg: 'A256GCM',
    kid,
    nonce: bytes.subarray(0, NONCE_BYTES),
    ct: bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES),
    tag: bytes.subarray(bytes.length - TAG_BYTES),
  };
};

/** Encrypts one secret value; a fresh random 96-bit nonce each time, the header bound as associated data. */
export const encryptSecret = (value: string, dataKey: DataKey): string => {
  requireKid(dataKey.kid);
  requireKey(dataKey.key, 'A data key');
  const header = `enc:v1:${dataKey.kid}`;
  return `${header}:${seal(dataKey.key, Buffer.from(value, 'utf8'), header).toString('base64url')}`;
};

export const decryptSecret = (text: string, dataKey: DataKey): string => {
  const secret = parseEncryptedSecret(text);
  if (secret.kid !== dataKey.kid)
    throw new SecretUnavailableError('wrong-key', `Encrypted under key ${secret.kid}, not ${dataKey.kid}`);
  const sealed = Buffer.concat([secret.nonce, secret.ct, secret.tag]);
  return open(dataKey.key, sealed, `enc:v1:${secret.kid}`, 'The secret').toString('utf8');
};
