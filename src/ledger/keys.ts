import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The log's Ed25519 signing key and everything an auditor needs to know about its public half. */
export type SigningKey = {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** The 32-byte public key (RFC 8032 encoding). */
  readonly publicKeyRaw: Buffer;
  /** SubjectPublicKeyInfo PEM: `openssl pkeyutl -verify -pubin -inkey` reads it as is. */
  readonly publicKeyPem: string;
  /** Fingerprint of the public key: lowercase hex SHA-256 of its 32 raw bytes. */
  readonly fingerprint: string;
  /** Where the key came from; `created` when this call generated it and wrote `file`. */
  readonly source: 'pem' | 'raw' | 'file' | 'created';
  readonly file?: string;
  /** Things worth logging at start (a key file others can read). */
  readonly warnings: readonly string[];
};

// DER prefix of a PKCS#8 Ed25519 private key, before its 32-byte seed (RFC 8410).
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
// DER prefix of an Ed25519 SubjectPublicKeyInfo, before its 32-byte key (RFC 8410).
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** The 32 raw bytes of an Ed25519 public key. */
export const rawPublicKey = (publicKey: KeyObject): Buffer => {
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return Buffer.from(der.subarray(der.length - 32));
};

const publicKeyFromRaw = (raw: Uint8Array): KeyObject => {
  if (raw.length !== 32) throw new Error(`An Ed25519 public key has 32 bytes, not ${raw.length}`);
  return crypto.createPublicKey({
    key: Buffer.concat([SPKI_ED25519_PREFIX, raw]),
    format: 'der',
    type: 'spki',
  });
};

const keyFingerprint = (publicKey: KeyObject): string =>
  crypto.createHash('sha256').update(rawPublicKey(publicKey)).digest('hex');

const requireEd25519 = (key: KeyObject, where: string): KeyObject => {
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`${where} is a ${key.asymmetricKeyType ?? key.type} key, not Ed25519`);
  return key;
};

const fromPrivate = (
  privateKey: KeyObject,
  source: SigningKey['source'],
  file?: string,
  warnings: string[] = [],
): SigningKey => {
  const publicKey = crypto.createPublicKey(privateKey);
  return {
    privateKey,
    publicKey,
    publicKeyRaw: rawPublicKey(publicKey),
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    fingerprint: keyFingerprint(publicKey),
    source,
    file,
    warnings,
  };
};

/** Base64 (standard or URL-safe) of a 32-byte seed, or of libsodium's 64 bytes (seed then public key). */
const rawPrivateKey = (text: string): KeyObject | null => {
  if (!BASE64.test(text)) return null;
  const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length !== 32 && bytes.length !== 64) return null;
  const privateKey = crypto.createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, bytes.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });
  if (bytes.length === 64 && !rawPublicKey(crypto.createPublicKey(privateKey)).equals(bytes.subarray(32)))
    throw new Error('The 64-byte Ed25519 key does not end with the public key of its seed');
  return privateKey;
};

const parsePrivateKey = (text: string, where: string): { key: KeyObject; kind: 'pem' | 'raw' } | null => {
  const trimmed = text.trim();
  if (trimmed.startsWith('-----BEGIN'))
    return { key: requireEd25519(crypto.createPrivateKey(trimmed), where), kind: 'pem' };
  const raw = rawPrivateKey(trimmed);
  return raw ? { key: raw, kind: 'raw' } : null;
};

/**
 * The log's signing key, from configuration: a PKCS#8 PEM, the base64 of a raw 32-byte Ed25519 seed
 * (or libsodium's 64-byte secret key), or the path of a file holding either. A path that does not
 * exist yet gets a new key, written as PEM with mode 0600 (created exclusively: two processes starting
 * at once end up with one key). Synchronous: it runs once, at start.
 */
export const loadOrCreateSigningKey = (pathOrKey: string): SigningKey => {
  const inline = parsePrivateKey(pathOrKey, 'The configured signing key');
  if (inline) return fromPrivate(inline.key, inline.kind);

  const file = path.resolve(pathOrKey);
  const readExisting = (): SigningKey => {
    const parsed = parsePrivateKey(fs.readFileSync(file, 'utf8'), `The signing key in ${file}`);
    if (!parsed) throw new Error(`${file} holds neither a PEM private key nor a base64 Ed25519 seed`);
    const mode = fs.statSync(file).mode & 0o777;
    const warnings =
      (mode & 0o077) !== 0
        ? [`The signing key file ${file} is readable by others (mode ${mode.toString(8)}); chmod 600 it`]
        : [];
    return fromPrivate(parsed.key, 'file', file, warnings);
  };
  if (fs.existsSync(file)) return readExisting();

  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const { privateKey } = crypto.generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  try {
    fs.writeFileSync(file, pem, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process created it between our check and our write: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readExisting();
    throw error;
  }
  return fromPrivate(privateKey, 'created', file);
};

/**
 * A public key from configuration or an auditor: SPKI PEM, base64 of the 32 raw bytes, a KeyObject,
 * or a signed-note verifier key (`name+hex key id+base64(0x01 || key)`).
 */
export type PublicKeyInput = KeyObject | string;

export const parsePublicKey = (input: PublicKeyInput): KeyObject => {
  if (typeof input !== 'string')
    return requireEd25519(input.type === 'private' ? crypto.createPublicKey(input) : input, 'The key');
  const text = input.trim();
  if (text.startsWith('-----BEGIN')) return requireEd25519(crypto.createPublicKey(text), 'The public key');
  const vkey = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+={0,2})$/.exec(text);
  if (vkey) {
    const [, name = '', id = '', key = ''] = vkey;
    const encoded = Buffer.from(key, 'base64');
    if (encoded.length !== 33 || encoded[0] !== 0x01)
      throw new Error('A verifier key ends with base64(0x01 || 32-byte Ed25519 key)');
    const raw = encoded.subarray(1);
    if (noteKeyId(name, raw).toString('hex') !== id)
      throw new Error(`The verifier key's ID ${id} does not belong to the name ${name} and its key`);
    return publicKeyFromRaw(raw);
  }
  if (BASE64.test(text)) return publicKeyFromRaw(Buffer.from(text, 'base64'));
  throw new Error('Not a public key: expected PEM, base64 of 32 bytes, or a verifier key');
};

/**
 * The signed-note key ID (c2sp.org/signed-note): the first four bytes of
 * SHA-256(key name || 0x0A || 0x01 || 32-byte Ed25519 public key).
 */
export const noteKeyId = (keyName: string, publicKeyRaw: Uint8Array): Buffer =>
  crypto
    .createHash('sha256')
    .update(keyName, 'utf8')
    .update(Buffer.from([0x0a, 0x01]))
    .update(publicKeyRaw)
    .digest()
    .subarray(0, 4);

/**
 * The verifier key string Go's golang.org/x/mod/sumdb/note and the transparency-dev tools accept:
 * `<name>+<key ID as 8 hex digits>+<base64(0x01 || public key)>`.
 */
export const verifierKey = (keyName: string, publicKey: KeyObject): string => {
  const raw = rawPublicKey(publicKey);
  return `${keyName}+${noteKeyId(keyName, raw).toString('hex')}+${Buffer.concat([Buffer.from([0x01]), raw]).toString('base64')}`;
};
