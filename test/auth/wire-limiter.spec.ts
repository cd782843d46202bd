/**
 * One wire-login limiter for the MySQL and PostgreSQL doors, counting every failed proof of a
 * password: caching_sha2_password's fast path was never counted (200 wrong tokens at 1,448/s, and
 * a user blocked after 11 full failures still got in through it), and the count was keyed on the
 * raw user name while names are case-insensitive (after `san` was blocked, `SAN` signed in). Now it
 * counts per normalised user name and per client address, and blocks before any proof is checked.
 */
import crypto from 'node:crypto';
import type { SqlEngine } from '../../src/mysql';
import { authenticate, CACHING_SHA2, sha2Digest, type AuthChannel } from '../../src/mysql/protocol/auth';
import { Capability } from '../../src/mysql/protocol/constants';
import { PacketWriter } from '../../src/mysql/protocol/packetWriter';
import type { HandshakeResponse } from '../../src/mysql/protocol/packets';
import type { UsersService } from '../../src/users/service';
import { sqlDoor, WireLoginLimiter } from '../../src/users/sqlDoors';

const PASSWORD = 'san-password-1';
const LIMIT = 3;

describe('the wire login limiter', () => {
  it('counts case variants of a user name as one name', () => {
    const limiter = new WireLoginLimiter({ limit: LIMIT, wideLimit: LIMIT, windowMs: 60_000 });
    limiter.failed('san', '10.0.0.1');
    limiter.failed('SAN', '10.0.0.2');
    limiter.failed('San', '10.0.0.3');
    for (const variant of ['san', 'SAN', 'sAn', 'SaN'])
      expect(limiter.blocked(variant, '10.0.0.9')).toBe(true);
    expect(limiter.blocked('other', '10.0.0.9')).toBe(false);
  });

  it('counts per client address, whatever the user names tried from it', () => {
    const limiter = new WireLoginLimiter({ limit: LIMIT, wideLimit: LIMIT, windowMs: 60_000 });
    limiter.failed('ann', '10.0.0.1');
    limiter.failed('bob', '10.0.0.1');
    limiter.failed('cat', '::ffff:10.0.0.1');
    expect(limiter.blocked('dan', '10.0.0.1')).toBe(true);
    expect(limiter.blocked('dan', '10.0.0.2')).toBe(false);
  });
});

describe("MySQL's caching_sha2_password fast path under the limiter", () => {
  const users = {
    enabledNow: () => true,
    enabled: async () => true,
    verifyPassword: async (name: string, password: string) =>
      name.toLowerCase() === 'san' && password === PASSWORD,
    credentialTag: () => 'tag-1',
    looksLikeToken: () => false,
    identityOfUser: async () => undefined,
  } as unknown as UsersService;
  const engine = {} as Pick<SqlEngine, 'execute'> & Required<Pick<SqlEngine, 'stream'>>;

  /** A door with the digest cached (a full login happened), and one login through its fast path. */
  const door = () => {
    const limiter = new WireLoginLimiter({ limit: LIMIT, wideLimit: LIMIT, windowMs: 60_000 });
    const auth = sqlDoor(users, engine, true, 'mysql', limiter).auth!;
    const sha2Cache = new Map<string, Buffer>([['san\u0000tag-1:0', sha2Digest(PASSWORD)]]);
    let verified = 0;
    const counting = { ...auth, verify: async (u: string, p: string) => (verified++, auth.verify(u, p)) };
    const login = async (user: string, token: (nonce: Buffer) => Buffer, host = '10.0.0.1') => {
      const nonce = crypto.randomBytes(20);
      // The client sends its token and leaves when asked for a full authentication: a free guess, once.
      const channel: AuthChannel = { writer: new PacketWriter(), secure: false, send: async () => null };
      const response = {
        capabilities: Capability.PLUGIN_AUTH,
        charset: 45,
        user,
        authResponse: token(nonce),
        database: undefined,
        plugin: CACHING_SHA2,
      } as unknown as HandshakeResponse;
      return authenticate(channel, response, nonce, host, {
        authenticator: counting,
        rsaKeys: async () => {
          throw new Error('no RSA in this spec');
        },
        sha2Cache: new Map([...sha2Cache].map(([k, v]) => [k.replace(/^san/, user), v])),
        defaultPlugin: CACHING_SHA2,
      });
    };
    return { limiter, login, verified: () => verified };
  };

  const sha256 = (...parts: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();
  /** SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce): what a client with the right password sends. */
  const rightToken = (nonce: Buffer) => {
    const stage1 = sha256(Buffer.from(PASSWORD, 'utf8'));
    const mix = sha256(sha256(stage1), nonce);
    return Buffer.from(stage1.map((b, i) => b ^ mix[i]!));
  };
  const wrongToken = () => crypto.randomBytes(32);

  it('lets the right token in through the fast path', async () => {
    expect(await door().login('san', rightToken)).toEqual({ ok: true });
  });

  it('counts every wrong fast-path token, then refuses even the right one before checking it', async () => {
    const d = door();
    for (let i = 0; i < LIMIT; i++) expect((await d.login('san', wrongToken)).ok).toBe(false);
    expect(d.limiter.blocked('san')).toBe(true);
    const blocked = await d.login('san', rightToken);
    expect(blocked).toMatchObject({ ok: false, message: expect.stringMatching(/too many failed logins/) });
    // Nothing was verified in full: the wrong tokens were refused by the fast path alone.
    expect(d.verified()).toBe(0);
  });

  it('shares one count between case variants of the name', async () => {
    const d = door();
    for (const user of ['san', 'SAN', 'San']) expect((await d.login(user, wrongToken)).ok).toBe(false);
    for (const user of ['san', 'SAN', 'sAN'])
      expect(await d.login(user, rightToken)).toMatchObject({
        ok: false,
        message: expect.stringMatching(/too many/),
      });
  });

  it('counts per client address: one address trying many names is blocked, another is not', async () => {
    const d = door();
    for (const user of ['ann', 'bob', 'cat']) await d.login(user, wrongToken, '10.9.9.9');
    expect(await d.login('san', rightToken, '10.9.9.9')).toMatchObject({ ok: false });
    expect(await d.login('san', rightToken, '10.0.0.2')).toEqual({ ok: true });
  });
});
