import type { Principal } from './requestContext';

/**
 * What a job or trigger may do at one run: its owner's rights now, or why it may do nothing
 * (src/users/owners.ts decides). `demoted` names a role lowered since the resource was made (a
 * statement refused for it says so).
 */
export type OwnerRights =
  | { readonly principal: Principal | undefined; readonly demoted: string | null }
  | { readonly refused: string };
