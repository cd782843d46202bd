import type { AppContext } from '../context';
import { BoundedMap } from '../shared/boundedMap';
import {
  sessionAggregate,
  sessionStream,
  usersAggregate,
  USERS_STREAM,
  type SessionState,
  type UsersState,
} from './state';

const MAX_SESSIONS = 2000;

/**
 * The `users` stream's state and sessions' states, as the checks read them. Every request asks: a
 * state is read again only when the read model moved (an event was applied, ours or, on
 * PostgreSQL, another process's), so a request costs no read of the log.
 */
export const userStateCache = (ctx: AppContext) => {
  let users: { version: number; state: Promise<UsersState>; loaded?: UsersState } | undefined;
  const sessions = new BoundedMap<string, { version: number; state: Promise<SessionState> }>(MAX_SESSIONS);
  return {
    state: (): Promise<UsersState> => {
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
    },
    /** The state of the read model's current version when it is loaded already (undefined otherwise). */
    loadedNow: (): UsersState | undefined =>
      users?.version === ctx.projections.version ? users.loaded : undefined,
    sessionState: (sessionId: string): Promise<SessionState> => {
      const version = ctx.projections.version;
      const known = sessions.get(sessionId);
      if (known?.version === version) return known.state;
      const loading = ctx.commands.load(sessionStream(sessionId), sessionAggregate).then((l) => l.state);
      sessions.set(sessionId, { version, state: loading });
      loading.catch(() => sessions.delete(sessionId));
      return loading;
    },
  };
};

export type UserStateCache = ReturnType<typeof userStateCache>;
