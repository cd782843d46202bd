import crypto from 'node:crypto';

/**
 * Password and token hashes: scrypt (node:crypto), N=2^14, r=8, p=1, a 16-byte random salt and a
 * 32-byte key, written `scrypt$N$r$p$salt$key` (base64url), so the cost can rise later and old
 * hashes still verify. Session secrets are 256 random bits: a SHA-256 of them cannot be reversed
 * by guessing, and checking it on every request costs nothing (scrypt would cost ~50 ms a request).
 */
const N = 16_384;
const R = 8;
const P = 1;
const KEY_BYTES = 32;

const scrypt = (secret: string, salt: Buffer, n: number, r: number, p: number) =>
  new Promise<Buffer>((resolve, reject) =>
    crypto.scrypt(secret, salt, KEY_BYTES, { N: n, r, p, maxmem: 256 * n * r * 2 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );

export const hashSecret = async (secret: string): Promise<string> => {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(secret, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
};

export const verifySecret = async (secret: string, stored: string): Promise<boolean> => {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || salt === undefined || key === undefined) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await scrypt(secret, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return actual.length === expected.length && crypto.timingSafeEqual(actual, expected);
};

/** A hash to check against when the user does not exist: the answer takes as long as for one who does. */
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hashSecret(crypto.randomBytes(16).toString('hex')));

export const sha256Hex = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

export const sameHex = (a: string, b: string) =>
  a.length === b.length && crypto.timingSafeEqual(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Random identifiers and secrets, URL- and cookie-safe. */
export const randomId = (bytes: number) => crypto.randomBytes(bytes).toString('base64url');
