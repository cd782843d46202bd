import type { Role } from '../../events';
import { nameKey } from '../shared/names';
import type { OwnerRights } from '../shared/ownerRights';
import { userById, type UsersState } from './state';

export type { OwnerRights } from '../shared/ownerRights';

/**
 * Who made a job or a trigger, as recorded then (role null: authentication was off). `actor`
 * (`user:<id>` or `token:<id>`) is recorded for jobs; a trigger's owner is found by name.
 */
export type ResourceOwner = {
  readonly actor?: string | null;
  readonly user: string | null;
  readonly role: Role | null;
  readonly project: string | null;
};

const RANK: Record<Role, number> = { auditor: 0, analyst: 1, editor: 2, admin: 3 };

/**
 * A job or trigger runs as its owner is now, never as it was (docs/sql.md "Jobs and triggers"): the user (by id, so a
 * new user of the same name is not the owner) must still exist, the token it was made with must
 * still be live, and the role is the lower of the one it was made with and the current one (a
 * promotion gives a resource no rights it was not made with; a demotion takes them away).
 */
export const ownerRightsNow = (
  state: UsersState,
  owner: ResourceOwner,
  now: Date,
  what: 'job' | 'trigger',
): OwnerRights => {
  if (owner.role === null) return { principal: undefined, demoted: null };
  const whose = `the ${what}'s owner ${owner.user ?? '(unknown)'}`;
  const [kind, id = ''] = (owner.actor ?? '').split(/:(.*)/s);
  const token = kind === 'token' ? state.tokens.get(id) : undefined;
  const user =
    token !== undefined
      ? userById(state, token.userId)
      : kind === 'user' && /^\d+$/.test(id)
        ? userById(state, Number(id))
        : owner.user === null
          ? undefined
          : state.users.get(nameKey(owner.user));
  if (!user) return { refused: `${whose} no longer exists` };
  if (kind === 'token' && token === undefined)
    return { refused: `${whose}: the access token it was made with was revoked` };
  if (token?.expiresAt != null && Date.parse(token.expiresAt) <= now.getTime())
    return { refused: `${whose}: the access token it was made with expired at ${token.expiresAt}` };
  const role = RANK[user.role] < RANK[owner.role] ? user.role : owner.role;
  return {
    principal: { user: user.name, role, project: token ? token.project : owner.project },
    demoted: role === owner.role ? null : `${whose} is now ${user.role}`,
  };
};
