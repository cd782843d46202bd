import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Envelope encryption for secrets that must be forgettable although the log is append-only: each
 * resource's secrets are encrypted (AES-256-GCM) under its own data key; the data key is kept only
 * wrapped by the master key, in a key store outside the log. Destroying the wrapped data key makes
 * every ciphertext of that resource, wherever the log was copied, unreadable. See README.md.
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

export type SecretProblem = 'malformed' | 'wrong-key' | 'tampered' | 'forgotten';

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

const requireKid = (kid: string) => {
  if (!KID.test(kid)) throw new Error(`Key id ${JSON.stringify(kid)} must be 1-128 of A-Z a-z 0-9 _ . -`);
};

const requireKey = (key: Buffer, what: string) => {
  if (key.length !== KEY_BYTES) throw new Error(`${what} has ${KEY_BYTES} bytes, not ${key.length}`);
};

/** A master key's id: derived from the key by HMAC, so it names the key without revealing it. */
export const masterKeyId = (key: Buffer): string =>
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
 * The master key from configuration: base64 of 32 bytes, or the path of a file holding that; a
 * path that does not exist yet gets a new random key, written with mode 0600 (exclusively, so two
 * processes starting together share one key).
 */
export const loadOrCreateMasterKey = (pathOrBase64: string): MasterKey => {
  const inline = decodeBase64Key(pathOrBase64);
  if (inline) return masterKeyFrom(inline);
  const file = path.resolve(pathOrBase64);
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
export type EncryptedSecret = {
  readonly v: 1;
  readonly alg: 'A256GCM';
  readonly kid: string;
  readonly nonce: Buffer;
  readonly ct: Buffer;
  readonly tag: Buffer;
};

/** `enc:v1:<kid>:<base64url(nonce || ciphertext || tag)>`: unmistakably ciphertext, and names its key. */
export const formatEncryptedSecret = (secret: EncryptedSecret): string => {
  requireKid(secret.kid);
  if (secret.nonce.length !== NONCE_BYTES || secret.tag.length !== TAG_BYTES)
    throw new Error('An AES-256-GCM secret has a 12-byte nonce and a 16-byte tag');
  return `enc:v1:${secret.kid}:${Buffer.concat([secret.nonce, secret.ct, secret.tag]).toString('base64url')}`;
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

/** Where wrapped data keys live: outside the append-only log, so that one can be destroyed. */
export interface DataKeyStore {
  /** Stores a new key; refuses an id already in use. */
  put(kid: string, wrapped: string): Promise<void>;
  get(kid: string): Promise<string | null>;
  /** Removes the key for good; false when there was none. */
  destroy(kid: string): Promise<boolean>;
}

/**
 * One file per wrapped key (mode 0600) in a directory of its own. Written to a temporary file and
 * linked into place (so a crash never leaves half a key, and an id is never overwritten); destroyed
 * by overwriting the file with random bytes, syncing, unlinking and syncing the directory. On SSDs
 * and copy-on-write file systems the overwrite is best effort: what makes the key unrecoverable
 * for good is that it was only ever stored wrapped, and the master key is rotated (README.md).
 */
export class FileDataKeyStore implements DataKeyStore {
  constructor(private readonly directory: string) {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
  }

  private fileOf(kid: string): string {
    requireKid(kid);
    return path.join(this.directory, `${kid}.key`);
  }

  private async syncDirectory(): Promise<void> {
    const handle = await fs.promises.open(this.directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async put(kid: string, wrapped: string): Promise<void> {
    const file = this.fileOf(kid);
    const temporary = path.join(this.directory, `.${kid}.${crypto.randomUUID()}.tmp`);
    const handle = await fs.promises.open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(wrapped, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.promises.link(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw new Error(`Data key ${kid} exists already`);
      throw error;
    } finally {
      await fs.promises.unlink(temporary);
    }
    await this.syncDirectory();
  }

  async get(kid: string): Promise<string | null> {
    try {
      return await fs.promises.readFile(this.fileOf(kid), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async destroy(kid: string): Promise<boolean> {
    const file = this.fileOf(kid);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, 'r+');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      await handle.write(crypto.randomBytes(Math.max(size, 1)), 0, Math.max(size, 1), 0);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.unlink(file);
    await this.syncDirectory();
    return true;
  }
}

/**
 * What services use: create a resource's data key, encrypt and decrypt its secrets, forget it.
 * Unwrapped keys are cached in memory; destroying a key drops it from the cache too.
 */
export class SecretVault {
  private readonly unwrapped = new Map<string, DataKey>();

  /** `retired`: earlier master keys, still accepted for unwrapping until every key is re-wrapped. */
  constructor(
    private readonly store: DataKeyStore,
    private readonly master: MasterKey,
    private readonly retired: readonly MasterKey[] = [],
  ) {}

  async createKey(kid: string = crypto.randomUUID()): Promise<DataKey> {
    const dataKey = generateDataKey(kid);
    await this.store.put(kid, wrapDataKey(dataKey, this.master));
    this.unwrapped.set(kid, dataKey);
    return dataKey;
  }

  private async keyOf(kid: string): Promise<DataKey> {
    const cached = this.unwrapped.get(kid);
    if (cached) return cached;
    const wrapped = await this.store.get(kid);
    if (wrapped === null) throw new SecretUnavailableError('forgotten', `Data key ${kid} was destroyed`);
    const dataKey = unwrapDataKey(wrapped, kid, [this.master, ...this.retired]);
    this.unwrapped.set(kid, dataKey);
    return dataKey;
  }

  async encrypt(kid: string, value: string): Promise<string> {
    return encryptSecret(value, await this.keyOf(kid));
  }

  async decrypt(text: string): Promise<string> {
    return decryptSecret(text, await this.keyOf(parseEncryptedSecret(text).kid));
  }

  /** Destroys the key: every secret encrypted under it becomes unreadable, here and in every copy of the log. */
  async destroyKey(kid: string): Promise<boolean> {
    const cached = this.unwrapped.get(kid);
    cached?.key.fill(0);
    this.unwrapped.delete(kid);
    return this.store.destroy(kid);
  }
}
