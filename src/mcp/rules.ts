import { nameKey, nameParts } from '../shared/names';
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

/**
 * The project and the name an argument means: `project.name` as SQL writes it, or a bare name in
 * `project` (else `fallback`, the caller's default project). A qualified name whose project is not
 * the `project` also given is refused (a string, the reason).
 */
export const projectRef = (
  project: string | undefined,
  ref: string,
  fallback: string,
): { readonly project: string; readonly name: string } | string => {
  const parts = nameParts(ref);
  if (parts.length === 1) return { project: project ?? fallback, name: parts[0]! };
  if (parts.length !== 2)
    return `${JSON.stringify(ref.slice(0, 300))} is not a name: write name or project.name`;
  const [named, name] = parts as [string, string];
  if (project !== undefined && nameKey(project) !== nameKey(named))
    return `${JSON.stringify(ref.slice(0, 300))} names project ${named.slice(0, 256)}, but project is ${project}: give one of them`;
  return { project: named, name };
};
