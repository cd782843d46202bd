import { settled, type AppContext } from '../context';
import { nameKey } from '../shared/names';
import type { Unstamped } from '../shared/params';
import type { Principal } from '../shared/requestContext';
import { decideSession, decideUsers, type SessionCommand, type UserCommand } from './decider';
import { decoyHash, verifySecret } from './hashing';
import { sessionAggregate, sessionStream, usersAggregate, USERS_STREAM, type User } from './state';
import type { UserStateCache } from './stateCache';

/** Who a credential names: the principal (role, project scope) and the actor recorded on events. */
export type Identity = {
  principal: Principal;
  actor: { kind: 'user' | 'token'; id: string };
  /** How the caller proved it: a session cookie or a bearer token. */
  via: 'session' | 'token' | 'mysql';
};

export const principalOf = (user: User, project: string | null): Principal => ({
  user: user.name,
  role: user.role,
  project,
});

/** The user these credentials name, or undefined (the same time either way). */
export const checkPassword = async (states: UserStateCache, name: string, password: string) => {
  const user = (await states.state()).users.get(nameKey(name));
  const ok = await verifySecret(password, user?.passwordHash ?? (await decoyHash()));
  return ok && user ? user : undefined;
};

/** A command on the `users` stream, answered once the read model has it. */
export const runUserCommand = async (ctx: AppContext, unstamped: Unstamped<UserCommand>) => {
  const command = { ...unstamped, metadata: { now: ctx.clock() } } as UserCommand;
  const outcome = await ctx.commands.run(USERS_STREAM, usersAggregate, (s) => decideUsers(command, s));
  await settled(ctx, outcome.lastPosition);
  return outcome;
};

/** A command on a session's stream, answered once the read model has it. */
export const runSessionCommand = async (
  ctx: AppContext,
  sessionId: string,
  unstamped: Unstamped<SessionCommand>,
) => {
  const command = { ...unstamped, metadata: { now: ctx.clock() } } as SessionCommand;
  const outcome = await ctx.commands.run(sessionStream(sessionId), sessionAggregate, (s) =>
    decideSession(command, s),
  );
  await settled(ctx, outcome.lastPosition);
};
