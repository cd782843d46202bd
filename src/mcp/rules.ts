import { nameKey } from '../shared/names';
import type { Caller } from './service';

/** The database a caller's statements read unqualified names in: their token's project, else mindsdb. */
export const defaultProject = (caller: Caller) => caller.request.principal?.project ?? 'mindsdb';

/**
 * Who may ask an agent (docs/security.md "Sign-in and roles", as over REST's completions route):
 * admins, editors and analysts; not auditors (the event log only); a project-scoped token only its
 * project's agents. With authentication off, anyone the Host check let in.
 */
export const askRefusal = (caller: Caller, project: string): string | null => {
  const principal = caller.request.principal;
  if (!principal) return null;
  if (principal.role === 'auditor') return 'The auditor role reads the event log and audit routes only';
  if (principal.project !== null && nameKey(principal.project) !== nameKey(project))
    return `This token reaches only project ${principal.project}`;
  return null;
};
