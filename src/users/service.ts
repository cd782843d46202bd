import type { AppContext } from '../context';
import { userAccounts } from './accounts';
import { userSessions } from './sessions';
import { userStateCache } from './stateCache';
import { userTokens } from './tokens';

export type { Identity } from './identity';

type UsersSettings = { sessionTtlMs: number };

/**
 * Users, their access tokens and sessions. Every check reads the log's view (the `users` stream's
 * state, a session's stream), kept in memory by the command runner: a restart loses nothing, and a
 * revoked token or deleted user is refused on the next request. Lists answer from the projections.
 */
export const usersService = (ctx: AppContext, settings: UsersSettings) => {
  const states = userStateCache(ctx);
  return {
    ...userAccounts(ctx, states),
    ...userSessions(ctx, settings.sessionTtlMs, states),
    ...userTokens(ctx, states),
  };
};

export type UsersService = ReturnType<typeof usersService>;
