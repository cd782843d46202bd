import type { AppContext } from '../context';
import { unauthorized } from '../shared/errors';
import { randomId, sameHex, sha256Hex } from './hashing';
import { checkPassword, principalOf, runSessionCommand, type Identity } from './identity';
import { userById } from './state';
import type { UserStateCache } from './stateCache';

/** `<session id>.<secret>`. */
const SESSION_PATTERN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** Sessions: signing in by password, signing out, and the identity a session cookie carries. */
export const userSessions = (ctx: AppContext, sessionTtlMs: number, states: UserStateCache) => ({
  /** A user's name and password → a new session: the cookie's value and when it expires. */
  login: async (name: string, password: string, address: string) => {
    const user = await checkPassword(states, name, password);
    if (!user) throw unauthorized('Invalid username or password');
    const sessionId = randomId(16);
    const secret = randomId(32);
    const expiresAt = new Date(ctx.clock().getTime() + sessionTtlMs);
    await runSessionCommand(ctx, sessionId, {
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
    const session = await states.sessionState(m[1]!);
    if (session.status !== 'live' || !sameHex(session.secretHash, sha256Hex(m[2]!))) return;
    await runSessionCommand(ctx, m[1]!, { type: 'EndSession', data: { reason: 'logout' } });
  },
  /** The identity a session cookie carries, or undefined (unknown, ended, expired, revoked). */
  fromSession: async (cookie: string): Promise<Identity | undefined> => {
    const m = SESSION_PATTERN.exec(cookie);
    if (!m) return undefined;
    const session = await states.sessionState(m[1]!);
    if (session.status !== 'live' || !sameHex(session.secretHash, sha256Hex(m[2]!))) return undefined;
    if (Date.parse(session.expiresAt) <= ctx.clock().getTime()) return undefined;
    const user = userById(await states.state(), session.userId);
    if (!user || session.startedPosition <= user.sessionsValidFrom) return undefined;
    return {
      principal: principalOf(user, null),
      actor: { kind: 'user', id: String(user.id) },
      via: 'session',
    };
  },
});
