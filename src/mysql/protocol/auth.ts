import crypto from 'node:crypto';
import type { Authenticator } from '../../doorway/credentials';
import { Capability } from './constants';
import type { Packet } from './packetReader';
import type { PacketWriter } from './packetWriter';
import { authMoreData, authSwitchRequest, type HandshakeResponse } from './packets';

export const NATIVE = 'mysql_native_password';
export const CACHING_SHA2 = 'caching_sha2_password';
export type AuthPlugin = typeof NATIVE | typeof CACHING_SHA2;

/** caching_sha2_password's one-byte messages after 0x01. */
const FAST_AUTH_SUCCESS = Buffer.from([0x03]);
const PERFORM_FULL_AUTHENTICATION = Buffer.from([0x04]);
const REQUEST_PUBLIC_KEY = 0x02;

/** 20 random printable bytes (no NUL, which would end the string in some clients). */
export const makeNonce = () => {
  const bytes = crypto.randomBytes(20);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 0x21 + (bytes[i]! % 94);
  return bytes;
};

const sha1 = (...parts: Buffer[]) => crypto.createHash('sha1').update(Buffer.concat(parts)).digest();
const sha256 = (...parts: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();
const xor = (a: Buffer, b: Buffer) => Buffer.from(a.map((v, i) => v ^ b[i % b.length]!));
const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && crypto.timingSafeEqual(a, b);

/** mysql_native_password: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw))); empty for an empty password. */
export const nativeToken = (password: string, nonce: Buffer) => {
  if (!password) return Buffer.alloc(0);
  const stage1 = sha1(Buffer.from(password, 'utf8'));
  return xor(stage1, sha1(nonce, sha1(stage1)));
};

/** What caching_sha2_password keeps per user: SHA256(SHA256(pw)). */
export const sha2Digest = (password: string) => sha256(sha256(Buffer.from(password, 'utf8')));

/** The fast path: the token is SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce); checked against the digest. */
export const sha2FastMatches = (token: Buffer, digest: Buffer, nonce: Buffer) => {
  if (token.length !== 32) return false;
  const stage1 = xor(token, sha256(digest, nonce));
  return sameBytes(sha256(stage1), digest);
};

/** An RSA-encrypted password: OAEP (SHA-1) over (password + NUL) XOR the nonce, repeated. */
const decryptPassword = (encrypted: Buffer, privateKey: crypto.KeyObject, nonce: Buffer) => {
  const plain = crypto.privateDecrypt(
    { key: privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
    encrypted,
  );
  return nulTerminated(xor(plain, nonce));
};

const nulTerminated = (b: Buffer) => {
  const end = b.indexOf(0);
  return b.subarray(0, end < 0 ? b.length : end).toString('utf8');
};

export type RsaKeys = { publicKeyPem: string; privateKey: crypto.KeyObject };

/** The server's RSA pair for caching_sha2_password over plain TCP: made once, when a client first asks. */
export const lazyRsaKeys = (): (() => Promise<RsaKeys>) => {
  let made: Promise<RsaKeys> | undefined;
  return () =>
    (made ??= new Promise((resolve, reject) =>
      crypto.generateKeyPair('rsa', { modulusLength: 2048 }, (err, publicKey, privateKey) => {
        if (err) reject(err);
        else
          resolve({ publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), privateKey });
      }),
    ));
};

/** The packets of the authentication exchange, as the connection provides them. */
export interface AuthChannel {
  readonly writer: PacketWriter;
  readonly secure: boolean;
  /** Writes what is in the writer and returns the client's next packet (null: it left). */
  send(): Promise<Packet | null>;
}

type AuthResult = { ok: true } | { ok: false; message: string };

export type AuthOptions = {
  authenticator: Authenticator | undefined;
  rsaKeys: () => Promise<RsaKeys>;
  /** caching_sha2_password's cache: a user's digest after a full authentication succeeded. */
  sha2Cache: Map<string, Buffer>;
  defaultPlugin: AuthPlugin;
};

const denied = (user: string, host: string, usedPassword: boolean): AuthResult => ({
  ok: false,
  message: `Access denied for user '${user}'@'${host}' (using password: ${usedPassword ? 'YES' : 'NO'})`,
});

const tooManyFailures = (user: string, host: string): AuthResult => ({
  ok: false,
  message: `Access denied for user '${user}'@'${host}': too many failed logins for this user or from this address, wait before trying again`,
});

/**
 * Authenticates the client whose handshake response this is, switching plugin where needed:
 * a client that answered with another plugin than the greeting's is asked again (an unknown plugin
 * is switched to the greeting's, mysql_native_password to caching_sha2_password when the
 * configured credentials are not kept in clear). caching_sha2's fast path needs the user's digest (cached after a full authentication, or from clear
 * credentials); otherwise the full authentication takes the password over TLS, or RSA-encrypted
 * with the server's public key (which the client asks for) over plain TCP.
 */
export const authenticate = async (
  channel: AuthChannel,
  response: HandshakeResponse,
  nonce: Buffer,
  host: string,
  o: AuthOptions,
): Promise<AuthResult> => {
  let plugin: string = response.capabilities & Capability.PLUGIN_AUTH ? (response.plugin ?? NATIVE) : NATIVE;
  let token = response.authResponse;
  const switchTo = async (next: AuthPlugin) => {
    authSwitchRequest(channel.writer, next, nonce);
    const answer = await channel.send();
    if (!answer) return false;
    plugin = next;
    token = answer.payload;
    return true;
  };
  const auth = o.authenticator;
  // The plugin this login goes through: the client's, unless it is unknown here, or is
  // mysql_native_password while the credentials are not kept in clear (only caching_sha2 can then check them).
  const known = plugin === NATIVE || plugin === CACHING_SHA2 ? plugin : o.defaultPlugin;
  const target: AuthPlugin = known === NATIVE && auth && !auth.passwordOf ? CACHING_SHA2 : known;
  // A client answering with another plugin than the greeting's did not use the greeting's nonce
  // (MariaDB's Connector/C sends an empty token then): it is asked again, by name.
  if ((target !== plugin || plugin !== o.defaultPlugin) && !(await switchTo(target)))
    return { ok: false, message: 'the client left during authentication' };

  if (!auth) {
    // Authentication is off: any user and password connect. An empty password has no token, and
    // its answer is the OK alone (Connector/C reads a fast-auth byte there as a broken handshake).
    if (plugin === CACHING_SHA2 && token.length > 0) authMoreData(channel.writer, FAST_AUTH_SUCCESS);
    return { ok: true };
  }
  // Every failed proof counts (once per login), the fast path's too: a wrong token costs the client
  // no scrypt, so uncounted it was a free guess. Over the limit, no proof is checked at all.
  let counted = false;
  const failed = (): AuthResult => {
    if (!counted) auth.failed?.(response.user, host);
    counted = true;
    return denied(response.user, host, token.length > 0);
  };
  const blocked = async () => (auth.blocked ? await auth.blocked(response.user, host) : false);
  if (await blocked()) return tooManyFailures(response.user, host);
  const clear = auth.passwordOf ? await auth.passwordOf(response.user) : undefined;
  if (plugin === NATIVE)
    return clear !== undefined && sameBytes(token, nativeToken(clear, nonce)) ? { ok: true } : failed();

  // caching_sha2_password. The cache is per user and credential generation: a changed password
  // (a new tag) no longer finds the old digest.
  const cacheKey = `${response.user}\u0000${auth.cacheTag ? await auth.cacheTag(response.user) : ''}`;
  const digest = o.sha2Cache.get(cacheKey) ?? (clear !== undefined ? sha2Digest(clear) : undefined);
  if (token.length === 0)
    // An empty password sends no token; the answer is the OK (or the error) alone.
    return (await auth.verify(response.user, '')) ? { ok: true } : failed();
  if (digest) {
    if (sha2FastMatches(token, digest, nonce)) {
      authMoreData(channel.writer, FAST_AUTH_SUCCESS);
      return { ok: true };
    }
    // A wrong token is a failed proof, whether or not the client goes on to a full authentication.
    failed();
    if (await blocked()) return tooManyFailures(response.user, host);
  }
  authMoreData(channel.writer, PERFORM_FULL_AUTHENTICATION);
  let answer = await channel.send();
  if (!answer) return { ok: false, message: 'the client left during authentication' };
  let password: string;
  if (channel.secure) password = nulTerminated(answer.payload);
  else if (answer.payload.length === 1 && answer.payload[0] === REQUEST_PUBLIC_KEY) {
    const keys = await o.rsaKeys();
    authMoreData(channel.writer, Buffer.from(keys.publicKeyPem, 'utf8'));
    answer = await channel.send();
    if (!answer) return { ok: false, message: 'the client left during authentication' };
    try {
      password = decryptPassword(answer.payload, keys.privateKey, nonce);
    } catch {
      return failed();
    }
  } else
    return {
      ok: false,
      message:
        "caching_sha2_password needs a secure channel for this login: connect with TLS, or let the client ask for the server's RSA public key (MySQL's mysql: --get-server-public-key; MariaDB's mysql: --skip-ssl; Connector/J: allowPublicKeyRetrieval=true)",
    };
  if (!(await auth.verify(response.user, password))) return failed();
  o.sha2Cache.set(cacheKey, sha2Digest(password));
  return { ok: true };
};
