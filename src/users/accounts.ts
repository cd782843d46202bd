import type { AppContext } from '../context';
import { nameKey } from '../shared/names';
import { hashSecret, sha256Hex, verifySecret } from './hashing';
import { checkPassword, principalOf, runUserCommand, type Identity } from './identity';
import { ownerRightsNow, type OwnerRights, type ResourceOwner } from './owners';
import { presentUser } from './present';
import { userRows } from './projection';
import { authEnabled, type Role } from './state';
import type { UserStateCache } from './stateCache';

/** Users: whether auth is on, the users themselves, their passwords, and what an owner may do. */
export const userAccounts = (ctx: AppContext, states: UserStateCache) => ({
  /** On once an admin exists (AUTH_USERNAME/AUTH_PASSWORD make one at start). */
  enabled: async () => authEnabled(await states.state()),
  /**
   * `enabled` without a wait, when the state of the read model's current version is loaded
   * (undefined otherwise): the MySQL door asks on every statement, and an await is a fair part
   * of a `SELECT 1`'s cost.
   */
  enabledNow: (): boolean | undefined => {
    const loaded = states.loadedNow();
    return loaded ? authEnabled(loaded) : undefined;
  },

  /** AUTH_USERNAME/AUTH_PASSWORD: that admin exists, with that password (changed if it differs). */
  bootstrap: async (name: string, password: string) => {
    const user = (await states.state()).users.get(nameKey(name));
    if (!user)
      return void (await runUserCommand(ctx, {
        type: 'CreateUser',
        data: { name, role: 'admin', passwordHash: await hashSecret(password) },
      }));
    if (!(await verifySecret(password, user.passwordHash)))
      await runUserCommand(ctx, {
        type: 'ChangePassword',
        data: { name, passwordHash: await hashSecret(password) },
      });
    if (user.role !== 'admin')
      await runUserCommand(ctx, { type: 'ChangeRole', data: { name, role: 'admin' } });
  },

  list: async () => (await ctx.cached('users', () => userRows(ctx.duck))).map(presentUser),
  get: async (name: string) => {
    const row = (await userRows(ctx.duck)).find((r) => nameKey(r.NAME) === nameKey(name));
    return row ? presentUser(row) : undefined;
  },
  create: async (input: { name: string; role: Role; password: string }) => {
    await runUserCommand(ctx, {
      type: 'CreateUser',
      data: { name: input.name, role: input.role, passwordHash: await hashSecret(input.password) },
    });
  },
  update: async (name: string, input: { role?: Role; password?: string }) => {
    if (input.password !== undefined)
      await runUserCommand(ctx, {
        type: 'ChangePassword',
        data: { name, passwordHash: await hashSecret(input.password) },
      });
    if (input.role !== undefined)
      await runUserCommand(ctx, { type: 'ChangeRole', data: { name, role: input.role } });
  },
  remove: async (name: string) => {
    await runUserCommand(ctx, { type: 'DeleteUser', data: { name } });
  },

  /** Names a user's current password (its hash's digest): '' for no such user. */
  credentialTag: async (name: string) => {
    const user = (await states.state()).users.get(nameKey(name));
    return user ? sha256Hex(`${user.id}:${user.passwordHash}`) : '';
  },
  /** A user's identity by name (a MySQL connection's user, authenticated when it connected). */
  identityOfUser: async (name: string): Promise<Identity | undefined> => {
    const user = (await states.state()).users.get(nameKey(name));
    return user
      ? { principal: principalOf(user, null), actor: { kind: 'user', id: String(user.id) }, via: 'mysql' }
      : undefined;
  },
  /** Whether a password is a user's (the MySQL protocol's check). */
  verifyPassword: async (name: string, password: string) =>
    (await checkPassword(states, name, password)) !== undefined,

  /** What a job or trigger may do now, as its owner is now (owners.ts). */
  ownerRights: async (owner: ResourceOwner, what: 'job' | 'trigger'): Promise<OwnerRights> =>
    ownerRightsNow(await states.state(), owner, ctx.clock(), what),
});
