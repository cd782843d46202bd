import type { Role, SessionEnded, SessionStarted, UserEvent } from '../../events';
import { conflict, invalid, notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import { decideByType, type Now } from '../shared/decision';
import type { SessionState, UsersState } from './state';

/** Hashes arrive made (scrypt is slow and random-salted: no I/O, no randomness in here). */
export type UserCommand =
  | { type: 'CreateUser'; data: { name: string; role: Role; passwordHash: string }; metadata: Now }
  | { type: 'ChangePassword'; data: { name: string; passwordHash: string }; metadata: Now }
  | { type: 'ChangeRole'; data: { name: string; role: Role }; metadata: Now }
  | { type: 'DeleteUser'; data: { name: string }; metadata: Now }
  | {
      type: 'CreateToken';
      data: {
        user: string;
        tokenId: string;
        name: string;
        secretHash: string;
        project: string | null;
        expiresAt: Date | null;
      };
      metadata: Now;
    }
  | { type: 'RevokeToken'; data: { tokenId: string; owner: string | null }; metadata: Now };

export type SessionCommand =
  | {
      type: 'StartSession';
      data: {
        sessionId: string;
        userId: number;
        user: string;
        secretHash: string;
        address: string;
        expiresAt: Date;
      };
      metadata: Now;
    }
  | { type: 'EndSession'; data: { reason: 'logout' | 'revoked' }; metadata: Now };

const USER_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;

const admins = (state: UsersState) => [...state.users.values()].filter((u) => u.role === 'admin');

const requireUser = (state: UsersState, name: string) => {
  const user = state.users.get(nameKey(name));
  if (!user) throw notFound(`User ${name} does not exist`, 'User not found');
  return user;
};

/** The last admin stays: without one, authentication would turn itself off. */
const keepAnAdmin = (state: UsersState, name: string) => {
  const rest = admins(state).filter((u) => nameKey(u.name) !== nameKey(name));
  if (rest.length === 0)
    throw conflict(
      `${name} is the last admin: make another admin first (without one, authentication would be off)`,
      'Last admin',
    );
};

type Command<T extends UserCommand['type']> = Extract<UserCommand, { type: T }>;

const createUser = (command: Command<'CreateUser'>, state: UsersState): UserEvent[] => {
  const at = command.metadata.now.toISOString();
  const d = command.data;
  if (!USER_NAME.test(d.name))
    throw invalid('A user name is 1 to 64 letters, digits, _ . @ or -', 'Invalid user name');
  if (state.users.has(nameKey(d.name)))
    throw conflict(`User ${d.name} already exists`, 'User already exists');
  return [
    {
      type: 'UserCreated',
      data: { name: d.name, role: d.role, passwordHash: d.passwordHash, createdAt: at },
    },
  ];
};

const changePassword = (command: Command<'ChangePassword'>, state: UsersState): UserEvent[] => {
  const at = command.metadata.now.toISOString();
  const user = requireUser(state, command.data.name);
  return [
    {
      type: 'UserPasswordChanged',
      data: { userId: user.id, name: user.name, passwordHash: command.data.passwordHash, changedAt: at },
    },
  ];
};

const changeRole = (command: Command<'ChangeRole'>, state: UsersState): UserEvent[] => {
  const at = command.metadata.now.toISOString();
  const user = requireUser(state, command.data.name);
  if (user.role === command.data.role) return [];
  if (user.role === 'admin') keepAnAdmin(state, user.name);
  return [
    {
      type: 'UserRoleChanged',
      data: { userId: user.id, name: user.name, role: command.data.role, changedAt: at },
    },
  ];
};

const deleteUser = (command: Command<'DeleteUser'>, state: UsersState): UserEvent[] => {
  const at = command.metadata.now.toISOString();
  const user = requireUser(state, command.data.name);
  if (user.role === 'admin') keepAnAdmin(state, user.name);
  return [{ type: 'UserDeleted', data: { userId: user.id, name: user.name, deletedAt: at } }];
};

const createToken = (command: Command<'CreateToken'>, state: UsersState): UserEvent[] => {
  const at = command.metadata.now.toISOString();
  const d = command.data;
  const user = requireUser(state, d.user);
  if (!d.name.trim()) throw invalid('A token needs a name', 'Invalid token');
  if (d.expiresAt && d.expiresAt.getTime() <= command.metadata.now.getTime())
    throw invalid('expires_at is in the past', 'Invalid token');
  return [
    {
      type: 'AccessTokenCreated',
      data: {
        tokenId: d.tokenId,
        userId: user.id,
        user: user.name,
        name: d.name,
        secretHash: d.secretHash,
        project: d.project,
        expiresAt: d.expiresAt?.toISOString() ?? null,
        createdAt: at,
      },
    },
  ];
};

const revokeToken = (command: Command<'RevokeToken'>, state: UsersState): UserEvent[] => {
  const at = command.metadata.now.toISOString();
  const token = state.tokens.get(command.data.tokenId);
  // Someone else's token reads as unknown: its existence is not theirs to learn.
  if (!token || (command.data.owner !== null && nameKey(token.user) !== nameKey(command.data.owner)))
    throw notFound(`Token ${command.data.tokenId} does not exist`, 'Token not found');
  return [
    { type: 'AccessTokenRevoked', data: { tokenId: token.tokenId, userId: token.userId, revokedAt: at } },
  ];
};

export const decideUsers = decideByType<UserCommand, UsersState, UserEvent>({
  CreateUser: createUser,
  ChangePassword: changePassword,
  ChangeRole: changeRole,
  DeleteUser: deleteUser,
  CreateToken: createToken,
  RevokeToken: revokeToken,
});

type SessionCommandOf<T extends SessionCommand['type']> = Extract<SessionCommand, { type: T }>;

const startSession = (command: SessionCommandOf<'StartSession'>, state: SessionState): SessionStarted[] => {
  const at = command.metadata.now.toISOString();
  if (state.status !== 'none') throw conflict('This session exists already', 'Session exists');
  const d = command.data;
  return [
    {
      type: 'SessionStarted',
      data: {
        sessionId: d.sessionId,
        userId: d.userId,
        user: d.user,
        secretHash: d.secretHash,
        address: d.address,
        startedAt: at,
        expiresAt: d.expiresAt.toISOString(),
      },
    },
  ];
};

const endSession = (command: SessionCommandOf<'EndSession'>, state: SessionState): SessionEnded[] => {
  const at = command.metadata.now.toISOString();
  if (state.status !== 'live') return [];
  return [
    { type: 'SessionEnded', data: { sessionId: state.sessionId, reason: command.data.reason, endedAt: at } },
  ];
};

export const decideSession = decideByType<SessionCommand, SessionState, SessionStarted | SessionEnded>({
  StartSession: startSession,
  EndSession: endSession,
});
