import type { Authenticator, ClientOf, ErrorAnswer, SqlContext, SqlEngine } from '../mysql';
import { withRequest } from '../shared/requestContext';
import { nameKey } from '../shared/names';
import { nextRequestId } from '../shared/requestIds';
import type { UsersService } from './service';

/**
 * Failed logins over the wire doors: one limiter for MySQL and PostgreSQL, counting every failed
 * proof of a password (MySQL's full authentication, its caching_sha2 fast path and scrambles,
 * PostgreSQL's cleartext password) per user name, normalised as user names are compared (case-
 * insensitively: `SAN` is `san`), and per client address. Past `limit` failures in `windowMs` for
 * the name or for the address, a login is refused before any proof is checked (HTTP's sign-in has
 * its own limits per address and name).
 */
export class WireLoginLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly o: { limit: number; windowMs: number; now?: () => number }) {}

  /** The counts a login falls under: its user name's and its address's. */
  private keys(user: string, address?: string) {
    const keys = [`user:${nameKey(user.normalize('NFC'))}`];
    if (address) keys.push(`address:${address.replace(/^::ffff:/, '').toLowerCase()}`);
    return keys;
  }

  private recent(key: string) {
    const now = (this.o.now ?? Date.now)();
    const kept = (this.failures.get(key) ?? []).filter((at) => at > now - this.o.windowMs);
    if (kept.length) this.failures.set(key, kept);
    else this.failures.delete(key);
    return { now, kept };
  }

  blocked(user: string, address?: string) {
    return this.keys(user, address).some((key) => this.recent(key).kept.length >= this.o.limit);
  }

  failed(user: string, address?: string) {
    for (const key of this.keys(user, address)) {
      const { now, kept } = this.recent(key);
      // Past the limit, older failures add nothing: the count stays bounded per key.
      this.failures.set(key, [...kept.slice(-this.o.limit), now]);
    }
  }
}

/** The wire protocols served beside HTTP. */
export type SqlDoor = 'mysql' | 'postgres';
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
): { auth: Authenticator | undefined; engine: Required<SqlEngine> } => {
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
    const identity = authOnAtStart && client ? await users.identityOfUser(client.user) : undefined;
    if (!identity)
      return {
        type: 'error',
        error_code: 1045,
        error_message: authOnAtStart
          ? `Access denied for user '${client?.user ?? ''}': the user no longer exists`
          : `Authentication was turned on after this ${DOOR_NAMES[door]} server started: reconnect after a restart`,
        context,
      };
    return withRequest(
      { requestId, interface: door, actor: identity.actor, principal: identity.principal },
      run,
    );
  };
  return {
    auth: authOnAtStart
      ? {
          // The protocols ask `blocked` before any proof and report each failed one (the fast path's too).
          verify: (user, password) => users.verifyPassword(user, password),
          cacheTag: (user) => users.credentialTag(user),
          blocked: (user, host) => limiter?.blocked(user, host) ?? false,
          failed: (user, host) => limiter?.failed(user, host),
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
