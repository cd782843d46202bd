import type { RecordedEvent, Role } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { nameKey } from '../shared/names';

export type { Role } from '../../events';
export { ROLES } from '../../events';

export type User = {
  readonly id: number;
  readonly name: string;
  readonly role: Role;
  readonly passwordHash: string;
  /** Sessions started before this log position are no longer valid (the password changed). */
  readonly sessionsValidFrom: bigint;
  readonly createdAt: string;
};

type AccessToken = {
  readonly tokenId: string;
  readonly userId: number;
  readonly user: string;
  readonly name: string;
  readonly secretHash: string;
  readonly project: string | null;
  readonly expiresAt: string | null;
  readonly createdAt: string;
};

/** The `users` stream: every live user (by name key) and every live token (by token id). */
export type UsersState = {
  readonly users: ReadonlyMap<string, User>;
  readonly tokens: ReadonlyMap<string, AccessToken>;
};

export const USERS_STREAM = 'users';

const evolveUsers = (state: UsersState, event: RecordedEvent): UsersState => {
  switch (event.type) {
    case 'UserCreated': {
      const users = new Map(state.users);
      users.set(nameKey(event.data.name), {
        id: Number(event.meta.position),
        name: event.data.name,
        role: event.data.role,
        passwordHash: event.data.passwordHash,
        sessionsValidFrom: event.meta.position,
        createdAt: event.data.createdAt,
      });
      return { ...state, users };
    }
    case 'UserPasswordChanged':
    case 'UserRoleChanged': {
      const key = nameKey(event.data.name);
      const user = state.users.get(key);
      if (!user) return state;
      const users = new Map(state.users);
      users.set(
        key,
        event.type === 'UserRoleChanged'
          ? { ...user, role: event.data.role }
          : { ...user, passwordHash: event.data.passwordHash, sessionsValidFrom: event.meta.position },
      );
      return { ...state, users };
    }
    case 'UserDeleted': {
      const users = new Map(state.users);
      users.delete(nameKey(event.data.name));
      const tokens = new Map([...state.tokens].filter(([, t]) => t.userId !== event.data.userId));
      return { users, tokens };
    }
    case 'AccessTokenCreated': {
      const tokens = new Map(state.tokens);
      const d = event.data;
      tokens.set(d.tokenId, {
        tokenId: d.tokenId,
        userId: d.userId,
        user: d.user,
        name: d.name,
        secretHash: d.secretHash,
        project: d.project,
        expiresAt: d.expiresAt,
        createdAt: d.createdAt,
      });
      return { ...state, tokens };
    }
    case 'AccessTokenRevoked': {
      const tokens = new Map(state.tokens);
      tokens.delete(event.data.tokenId);
      return { ...state, tokens };
    }
    default:
      return state;
  }
};

export const usersAggregate: Aggregate<UsersState> = {
  initialState: () => ({ users: new Map(), tokens: new Map() }),
  evolve: evolveUsers,
};

/** The user a name or id refers to. */
export const userById = (state: UsersState, id: number) => [...state.users.values()].find((u) => u.id === id);

/** Authentication is on once an admin exists (AUTH_USERNAME makes one at start). */
export const authEnabled = (state: UsersState) => [...state.users.values()].some((u) => u.role === 'admin');

/** One session's stream: started (for a user, until a time), perhaps ended. */
export type SessionState =
  | { status: 'none' }
  | {
      status: 'live' | 'ended';
      sessionId: string;
      userId: number;
      user: string;
      secretHash: string;
      startedPosition: bigint;
      expiresAt: string;
    };

export const sessionStream = (sessionId: string) => `session-${sessionId}`;

const evolveSession = (state: SessionState, event: RecordedEvent): SessionState => {
  switch (event.type) {
    case 'SessionStarted':
      return {
        status: 'live',
        sessionId: event.data.sessionId,
        userId: event.data.userId,
        user: event.data.user,
        secretHash: event.data.secretHash,
        startedPosition: event.meta.position,
        expiresAt: event.data.expiresAt,
      };
    case 'SessionEnded':
      return state.status === 'none' ? state : { ...state, status: 'ended' };
    default:
      return state;
  }
};

export const sessionAggregate: Aggregate<SessionState> = {
  initialState: () => ({ status: 'none' }),
  evolve: evolveSession,
};
