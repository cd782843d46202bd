import type { ClientOf, ErrorAnswer, SqlContext, SqlEngine } from '../doorway/engine';
import { plainAddress } from '../doorway/address';
import { currentLoginNote, noteLogin, type DoorAuthenticator } from '../doorway/credentials';
import { withRequest } from '../shared/requestContext';
import { nameKey } from '../shared/names';
import { nextRequestId } from '../shared/requestIds';
import type { UsersService } from './service';

/**
 * Failed logins over the wire doors: one limiter for MySQL and PostgreSQL, counting every failed
 * proof of a password (MySQL's full authentication, its caching_sha2 fast path and scrambles,
 * PostgreSQL's cleartext password), user names normalised as they are compared (case-insensitively:
 * `SAN` is `san`). Three counts, so that one noisy address does not lock out everyone behind it
 * (a NAT, an office, a CI runner):
 * - per user name and address: past `limit` failures in `windowMs`, that user is refused from that
 *   address (the others of the address still sign in);
 * - per address alone and per user name alone (from every address): only past `wideLimit`
 *   (default ten times `limit`), a guessing run over many names or from many addresses.
 * A refused login is refused before any proof is checked, saying why and when to retry (HTTP's
 * sign-in has its own limits per address and name).
 */
export class WireLoginLimiter {
  private readonly failures = new Map<string, number[]>();
  private readonly wideLimit: number;

  constructor(
    private readonly o: { limit: number; windowMs: number; wideLimit?: number; now?: () => number },
  ) {
    this.wideLimit = o.wideLimit ?? o.limit * 10;
  }

  /** The counts a login falls under, each with its limit and what its refusal says. */
  private keys(user: string, address?: string) {
    const name = nameKey(user.normalize('NFC'));
    const keys = [
      { key: `user:${name}`, limit: this.wideLimit, says: `for user ${user} from many addresses` },
    ];
    if (address) {
      const from = plainAddress(address).toLowerCase();
      keys.unshift(
        {
          key: `user-address:${name}@${from}`,
          limit: this.o.limit,
          says: `from this address for user ${user}`,
        },
        { key: `address:${from}`, limit: this.wideLimit, says: 'from this address, for any user' },
      );
    }
    return keys;
  }

  private recent(key: string) {
    const now = (this.o.now ?? Date.now)();
    const kept = (this.failures.get(key) ?? []).filter((at) => at > now - this.o.windowMs);
    if (kept.length) this.failures.set(key, kept);
    else this.failures.delete(key);
    return { now, kept };
  }

  /** Why a login is refused now (with when to retry), or undefined. */
  lockout(user: string, address?: string, discount = 0): string | undefined {
    for (const { key, limit, says } of this.keys(user, address)) {
      const { kept } = this.recent(key);
      if (kept.length - discount < limit) continue;
      // Sign-ins are taken again once enough failures have left the window.
      const until = new Date(kept[kept.length - limit]! + this.o.windowMs);
      return `too many failed sign-ins ${says}, retry after ${until.toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
    }
    return undefined;
  }

  /** Whether a login is refused now; `discount`: failures of this very login not to count. */
  blocked(user: string, address?: string, discount = 0) {
    return this.lockout(user, address, discount) !== undefined;
  }

  /** Takes back the latest failure counted for this login (it proved to be no guess). */
  forgive(user: string, address?: string) {
    for (const { key } of this.keys(user, address)) {
      const { kept } = this.recent(key);
      if (kept.length > 1) this.failures.set(key, kept.slice(0, -1));
      else this.failures.delete(key);
    }
  }

  failed(user: string, address?: string) {
    for (const { key, limit } of this.keys(user, address)) {
      const { now, kept } = this.recent(key);
      // Past the limit, older failures add nothing: the count stays bounded per key.
      this.failures.set(key, [...kept.slice(-limit), now]);
    }
  }
}

/** The wire protocols served beside HTTP. */
type SqlDoor = 'mysql' | 'postgres';
const DOOR_NAMES: Record<SqlDoor, string> = { mysql: 'MySQL', postgres: 'PostgreSQL' };

/**
 * A wire protocol's door (MySQL's or PostgreSQL's), with the same users and roles as HTTP.
 *
 * PostgreSQL's door asks for the password in clear (AuthenticationCleartextPassword) and takes it
 * only over TLS or from a loopback address; SCRAM, like mysql_native_password, would need a hash
 * of the password other than the scrypt one kept in the log. What follows is about MySQL's.
 *
 * Passwords are kept only as scrypt hashes, so neither mysql_native_password (whose check needs
 * SHA1(SHA1(password)), a hash too fast to keep) nor caching_sha2_password's fast path can be
 * answered from the log. Clients are therefore switched to caching_sha2_password's full
 * authentication: the password travels over TLS (always offered: MYSQL_TLS_CERT/KEY, or the door's
 * own certificate kept in DATA_DIR/tls) or RSA-encrypted with the server's key (mysql2 asks for it by
 * itself; MySQL's mysql with --get-server-public-key), and is
 * checked against the scrypt hash. After one full login the server keeps SHA256(SHA256(password))
 * in memory only (as MySQL does), so later logins take the fast path; every statement still
 * resolves the user's current role, so a deleted user's open connections are refused at once.
 *
 * With authentication off at start, any user name connects (as before); should an admin appear
 * later, those connections are refused until the server restarts with authentication on.
 */
export const sqlDoor = (
  users: UsersService,
  engine: Pick<SqlEngine, 'execute'> & Required<Pick<SqlEngine, 'stream'>>,
  authOnAtStart: boolean,
  door: SqlDoor = 'mysql',
  limiter?: WireLoginLimiter,
): { auth: DoorAuthenticator | undefined; engine: Required<SqlEngine> } => {
  /** Connections that signed in with an access token (by connection id): they act as that token. */
  const tokenConnections = new Map<number, string>();
  /**
   * Token logins per user name: part of MySQL's cache tag, so the digest a token login leaves in
   * caching_sha2's cache (kept per user name and tag) is never found again by the fast path, which
   * cannot tell a token from the password: every token login takes the full authentication.
   */
  const tokenLogins = new Map<string, number>();
  /** The identity a statement runs as: its connection's token's, else its user's. */
  const identityOf = async (client: ClientOf) => {
    const tokenId = tokenConnections.get(client.connectionId);
    if (tokenId === undefined) return { identity: await users.identityOfUser(client.user), tokenId };
    return { identity: await users.identityOfToken(tokenId), tokenId };
  };
  /** Runs a statement as the connection's user (their actor and role), or refuses it. */
  const asClient = async <T>(
    client: ClientOf | undefined,
    context: SqlContext,
    run: () => Promise<T>,
  ): Promise<T | (ErrorAnswer & { context: SqlContext })> => {
    const requestId = nextRequestId();
    if (!(users.enabledNow() ?? (await users.enabled())))
      return withRequest(
        { requestId, interface: door, actor: { kind: 'address', id: client?.host ?? '' } },
        run,
      );
    const { identity, tokenId } =
      authOnAtStart && client ? await identityOf(client) : { identity: undefined, tokenId: undefined };
    if (!identity)
      return {
        type: 'error',
        error_code: 1045,
        error_message: !authOnAtStart
          ? `Authentication was turned on after this ${DOOR_NAMES[door]} server started: reconnect after a restart`
          : tokenId !== undefined
            ? `Access denied for user '${client?.user ?? ''}': the access token this connection signed in with is revoked or expired`
            : `Access denied for user '${client?.user ?? ''}': the user no longer exists`,
        context,
      };
    return withRequest(
      { requestId, interface: door, actor: identity.actor, principal: identity.principal },
      run,
    );
  };
  /**
   * A password field's check: an access token (`mlt_…`, as `Authorization: Bearer` takes it) signs
   * in as that token, its role and project scope, when the user name is its user's; anything else
   * is the user's password.
   */
  const verify = async (user: string, password: string) => {
    if (users.looksLikeToken(password)) {
      const identity = await users.fromToken(password);
      if (identity && nameKey(identity.principal.user) === nameKey(user)) {
        // MySQL's fast path compared the client's scramble of this token with the user's cached
        // password digest and counted a failure: not a guess, so it is taken back.
        const counted = currentLoginNote()?.failed;
        if (counted) limiter?.forgive(counted.user, counted.host);
        noteLogin({ tokenId: identity.actor.id, failed: undefined });
        const key = nameKey(user);
        tokenLogins.set(key, (tokenLogins.get(key) ?? 0) + 1);
        return true;
      }
      if (identity) return false;
    }
    return users.verifyPassword(user, password);
  };
  return {
    auth: authOnAtStart
      ? {
          // The protocols ask `lockout`/`blocked` before any proof and report each failed one (the fast path's too).
          verify,
          cacheTag: async (user) =>
            `${await users.credentialTag(user)}:${tokenLogins.get(nameKey(user)) ?? 0}`,
          lockout: (user, host) => limiter?.lockout(user, host),
          // Asked again after a failed fast path: that failure (maybe a token's scramble, taken back
          // once the token signs in) does not stop the full authentication it leads to.
          blocked: (user, host) => limiter?.blocked(user, host, currentLoginNote()?.failed ? 1 : 0) ?? false,
          failed: (user, host) => {
            limiter?.failed(user, host);
            noteLogin({ failed: { user, host } });
          },
          signedIn: (connectionId, note) => {
            if (note.tokenId !== undefined) tokenConnections.set(connectionId, note.tokenId);
          },
          signedOut: (connectionId) => void tokenConnections.delete(connectionId),
        }
      : undefined,
    engine: {
      execute: (query, context, params, signal, client) =>
        asClient(client, context, () => engine.execute(query, context, params, signal)),
      // Large results come as DuckDB reads them; the role was checked when the statement started.
      stream: (query, context, params, signal, client) =>
        asClient(client, context, () => engine.stream(query, context, params, signal)),
    },
  };
};
