import { settled, type AppContext } from '../context';
import { unauthorized } from '../shared/errors';
import { nameKey } from '../shared/names';
import type { Unstamped } from '../shared/params';
import type { Principal } from '../shared/requestContext';
import { decideSession, decideUsers, type SessionCommand, type UserCommand } from './decider';
import { decoyHash, hashSecret, randomId, sameHex, sha256Hex, verifySecret } from './hashing';
import { tokenRows, userRows } from './projection';
import { ownerRightsNow, type OwnerRights, type ResourceOwner } from './owners';
import { presentToken, presentUser } from './present';
import {
  authEnabled,
  sessionAggregate,
  sessionStream,
  userById,
  usersAggregate,
  USERS_STREAM,
  type Role,
  type SessionState,
  type User,
  type UsersState,
} from './state';

/** Who a credential names: the principal (role, project scope) and the actor recorded on events. */
export type Identity = {
  principal: Principal;
  actor: { kind: 'user' | 'token'; id: string };
  /** How the caller proved it: a session cookie or a bearer token. */
  via: 'session' | 'token' | 'mysql';
};

export type UsersSettings = { sessionTtlMs: number };

/** `mlt_<token id>_<secret>`: the id finds the token, the secret is checked against its scrypt hash. */
const TOKEN_PATTERN = /^mlt_([A-Za-z0-9_-]{16})_([A-Za-z0-9_-]{43})$/;
/** `<session id>.<secret>`. */
const SESSION_PATTERN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/**
 * Users, their access tokens and sessions. Every check reads the log's view (the `users` stream's
 * state, a session's stream), kept in memory by the command runner: a restart loses nothing, and a
 * revoked token or deleted user is refused on the next request. Lists answer from the projections.
 */
export const usersService = (ctx: AppContext, settings: UsersSettings) => {
  // Every request asks: the states are read again only when the read model moved (an event was
  // applied, ours or, on PostgreSQL, another process's), so a request costs no read of the log.
  let users: { version: number; state: Promise<UsersState>; loaded?: UsersState } | undefined;
  const state = (): Promise<UsersState> => {
    const version = ctx.projections.version;
    if (users?.version !== version) {
      const loading = ctx.commands.load(USERS_STREAM, usersAggregate).then((l) => l.state);
      const entry: NonNullable<typeof users> = { version, state: loading };
      users = entry;
      loading.then(
        (loaded) => (entry.loaded = loaded),
        () => (users = undefined),
      );
    }
    return users.state;
  };
  const sessions = new Map<string, { version: number; state: Promise<SessionState> }>();
  const sessionState = (sessionId: string): Promise<SessionState> => {
    const version = ctx.projections.version;
    const known = sessions.get(sessionId);
    if (known?.version === version) return known.state;
    const loading = ctx.commands.load(sessionStream(sessionId), sessionAggregate).then((l) => l.state);
    sessions.delete(sessionId);
    sessions.set(sessionId, { version, state: loading });
    if (sessions.size > 2000) sessions.delete(sessions.keys().next().value as string);
    loading.catch(() => sessions.delete(sessionId));
    return loading;
  };
  const run = async (unstamped: Unstamped<UserCommand>) => {
    const command = { ...unstamped, metadata: { now: ctx.clock() } } as UserCommand;
    const outcome = await ctx.commands.run(USERS_STREAM, usersAggregate, (s) => decideUsers(command, s));
    await settled(ctx, outcome.lastPosition);
    return outcome;
  };
  const runSession = async (sessionId: string, unstamped: Unstamped<SessionCommand>) => {
    const command = { ...unstamped, metadata: { now: ctx.clock() } } as SessionCommand;
    const outcome = await ctx.commands.run(sessionStream(sessionId), sessionAggregate, (s) =>
      decideSession(command, s),
    );
    await settled(ctx, outcome.lastPosition);
  };

  // A token's scrypt check costs ~50 ms: a token once verified is remembered (by its SHA-256) until
  // it is revoked or expires, which every request still checks against the log's state.
  const verifiedTokens = new Map<string, string>();
  const rememberToken = (digest: string, tokenId: string) => {
    verifiedTokens.set(digest, tokenId);
    if (verifiedTokens.size > 1000) verifiedTokens.delete(verifiedTokens.keys().next().value as string);
  };

  const principalOf = (user: User, project: string | null): Principal => ({
    user: user.name,
    role: user.role,
    project,
  });

  /** A token that is not revoked or expired, and its user. */
  const liveToken = (users: UsersState, tokenId: string) => {
    const token = users.tokens.get(tokenId);
    if (!token) return undefined;
    if (token.expiresAt !== null && Date.parse(token.expiresAt) <= ctx.clock().getTime()) return undefined;
    const user = userById(users, token.userId);
    return user ? { token, user } : undefined;
  };
  const tokenIdentity = ({ token, user }: NonNullable<ReturnType<typeof liveToken>>): Identity => ({
    principal: principalOf(user, token.project),
    actor: { kind: 'token', id: token.tokenId },
    via: 'token',
  });

  /** The user these credentials name, or undefined (the same time either way). */
  const checkPassword = async (name: string, password: string) => {
    const user = (await state()).users.get(nameKey(name));
    const ok = await verifySecret(password, user?.passwordHash ?? (await decoyHash()));
    return ok && user ? user : undefined;
  };

  return {
    /** On once an admin exists (AUTH_USERNAME/AUTH_PASSWORD make one at start). */
    enabled: async () => authEnabled(await state()),
    /**
     * `enabled` without a wait, when the state of the read model's current version is loaded
     * (undefined otherwise): the MySQL door asks on every statement, and an await is a fair part
     * of a `SELECT 1`'s cost.
     */
    enabledNow: (): boolean | undefined =>
      users?.version === ctx.projections.version && users.loaded ? authEnabled(users.loaded) : undefined,

    /** AUTH_USERNAME/AUTH_PASSWORD: that admin exists, with that password (changed if it differs). */
    bootstrap: async (name: string, password: string) => {
      const user = (await state()).users.get(nameKey(name));
      if (!user)
        return void (await run({
          type: 'CreateUser',
          data: { name, role: 'admin', passwordHash: await hashSecret(password) },
        }));
      if (!(await verifySecret(password, user.passwordHash)))
        await run({ type: 'ChangePassword', data: { name, passwordHash: await hashSecret(password) } });
      if (user.role !== 'admin') await run({ type: 'ChangeRole', data: { name, role: 'admin' } });
    },

    list: async () => (await ctx.cached('users', () => userRows(ctx.duck))).map(presentUser),
    get: async (name: string) => {
      const row = (await userRows(ctx.duck)).find((r) => nameKey(r.NAME) === nameKey(name));
      return row ? presentUser(row) : undefined;
    },
    create: async (input: { name: string; role: Role; password: string }) => {
      await run({
        type: 'CreateUser',
        data: { name: input.name, role: input.role, passwordHash: await hashSecret(input.password) },
      });
    },
    update: async (name: string, input: { role?: Role; password?: string }) => {
      if (input.password !== undefined)
        await run({ type: 'ChangePassword', data: { name, passwordHash: await hashSecret(input.password) } });
      if (input.role !== undefined) await run({ type: 'ChangeRole', data: { name, role: input.role } });
    },
    remove: async (name: string) => {
      await run({ type: 'DeleteUser', data: { name } });
    },

    /** A user's name and password → a new session: the cookie's value and when it expires. */
    login: async (name: string, password: string, address: string) => {
      const user = await checkPassword(name, password);
      if (!user) throw unauthorized('Invalid username or password');
      const sessionId = randomId(16);
      const secret = randomId(32);
      const expiresAt = new Date(ctx.clock().getTime() + settings.sessionTtlMs);
      await runSession(sessionId, {
        type: 'StartSession',
        data: {
          sessionId,
          userId: user.id,
          user: user.name,
          secretHash: sha256Hex(secret),
          address,
          expiresAt,
        },
      });
      return { cookie: `${sessionId}.${secret}`, expiresAt };
    },
    /** The session this cookie names ends (nothing happens for an unknown one). */
    logout: async (cookie: string) => {
      const m = SESSION_PATTERN.exec(cookie);
      if (!m) return;
      const session = await sessionState(m[1]!);
      if (session.status !== 'live' || !sameHex(session.secretHash, sha256Hex(m[2]!))) return;
      await runSession(m[1]!, { type: 'EndSession', data: { reason: 'logout' } });
    },
    /** Names a user's current password (its hash's digest): '' for no such user. */
    credentialTag: async (name: string) => {
      const user = (await state()).users.get(nameKey(name));
      return user ? sha256Hex(`${user.id}:${user.passwordHash}`) : '';
    },
    /** A user's identity by name (a MySQL connection's user, authenticated when it connected). */
    identityOfUser: async (name: string): Promise<Identity | undefined> => {
      const user = (await state()).users.get(nameKey(name));
      return user
        ? { principal: principalOf(user, null), actor: { kind: 'user', id: String(user.id) }, via: 'mysql' }
        : undefined;
    },
    /** Whether a password is a user's (the MySQL protocol's check). */
    verifyPassword: async (name: string, password: string) =>
      (await checkPassword(name, password)) !== undefined,

    /** The identity a session cookie carries, or undefined (unknown, ended, expired, revoked). */
    fromSession: async (cookie: string): Promise<Identity | undefined> => {
      const m = SESSION_PATTERN.exec(cookie);
      if (!m) return undefined;
      const session = await sessionState(m[1]!);
      if (session.status !== 'live' || !sameHex(session.secretHash, sha256Hex(m[2]!))) return undefined;
      if (Date.parse(session.expiresAt) <= ctx.clock().getTime()) return undefined;
      const user = userById(await state(), session.userId);
      if (!user || session.startedPosition <= user.sessionsValidFrom) return undefined;
      return {
        principal: principalOf(user, null),
        actor: { kind: 'user', id: String(user.id) },
        via: 'session',
      };
    },
    /** The identity a bearer token carries, or undefined (unknown, wrong secret, expired, revoked). */
    fromToken: async (bearer: string): Promise<Identity | undefined> => {
      const m = TOKEN_PATTERN.exec(bearer);
      if (!m) return undefined;
      const live = liveToken(await state(), m[1]!);
      if (!live) return undefined;
      const digest = sha256Hex(bearer);
      if (verifiedTokens.get(digest) !== live.token.tokenId) {
        if (!(await verifySecret(m[2]!, live.token.secretHash))) return undefined;
        rememberToken(digest, live.token.tokenId);
      }
      return tokenIdentity(live);
    },
    /** Whether a password field holds an access token (`mlt_…`) rather than a password. */
    looksLikeToken: (text: string) => TOKEN_PATTERN.test(text),
    /**
     * A token's identity by its id, its secret checked already (a wire connection that signed in
     * with it): undefined once it is revoked or expired, or its user is gone.
     */
    identityOfToken: async (tokenId: string): Promise<Identity | undefined> => {
      const live = liveToken(await state(), tokenId);
      return live ? tokenIdentity(live) : undefined;
    },

    /** What a job or trigger may do now, as its owner is now (owners.ts). */
    ownerRights: async (owner: ResourceOwner, what: 'job' | 'trigger'): Promise<OwnerRights> =>
      ownerRightsNow(await state(), owner, ctx.clock(), what),

    /** A new token for a user: its clear text is in this answer only. */
    createToken: async (
      user: string,
      input: { name: string; project: string | null; expiresAt: Date | null },
    ) => {
      const tokenId = randomId(12);
      const secret = randomId(32);
      const outcome = await run({
        type: 'CreateToken',
        data: { user, tokenId, secretHash: await hashSecret(secret), ...input },
      });
      const created = outcome.events[0];
      return {
        id: tokenId,
        token: `mlt_${tokenId}_${secret}`,
        name: input.name,
        user,
        project: input.project,
        expires_at: input.expiresAt?.toISOString() ?? null,
        created_at: created?.meta.recordedAt ?? ctx.clock().toISOString(),
      };
    },
    /** `owner` null: any user's token (an admin). */
    revokeToken: async (tokenId: string, owner: string | null) => {
      await run({ type: 'RevokeToken', data: { tokenId, owner } });
    },
    tokens: async (user: string | null) => {
      const users = await state();
      const id = user === null ? null : (users.users.get(nameKey(user))?.id ?? -1);
      return (await tokenRows(ctx.duck, id)).map(presentToken);
    },
  };
};

export type UsersService = ReturnType<typeof usersService>;
