import type { Principal } from '../shared/requestContext';

/**
 * What each role may do over HTTP, by method and path (the SQL endpoint checks statements itself,
 * on the parse tree: src/sql/roles.ts):
 * - admin: everything, users included;
 * - editor: every resource and model, not users;
 * - analyst: reads (GET), SQL (read-only statements), predictions, agent and knowledge-base answers;
 * - auditor: the event log and audit routes, SQL over information_schema.EVENTS (resources as
 *   they were, `?as_of=`, join once answered from the log: until then a current resource is not
 *   an auditor's to read);
 * - everyone signed in: who am I, sign out, their own access tokens.
 * A project-scoped token reaches only `/api/projects/<its project>/…` and the SQL endpoint (where
 * its statements may name only that project).
 */
const OWN = /^\/api\/(me|logout|tokens(\/[^/]+)?)\/?$/i;
const USERS = /^\/api\/users(\/.*)?$/i;
/** LLM budgets: read by anyone who may query, set by admins (docs/llm-models.md "Budgets"). */
const LLM_BUDGETS = /^\/api\/llm\/budgets(\/.*)?$/i;
const AUDIT = /^\/api\/(events|audit(\/.*)?)\/?$/i;
const SQL = /^\/api\/sql\/query\/?$/i;
const ASKING = [
  SQL,
  /^\/api\/projects\/[^/]+\/models\/[^/]+\/predict\/?$/i,
  /^\/api\/projects\/[^/]+\/agents\/[^/]+\/completions(\/stream)?\/?$/i,
  /^\/api\/projects\/[^/]+\/knowledge_bases\/[^/]+\/completions\/?$/i,
];
const PROJECT_PATH = /^\/api\/projects\/([^/]+)(\/.*)?$/i;

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

/** Why the caller may not make this request, or null when they may. */
export const refusalOf = (principal: Principal, method: string, path: string): string | null => {
  if (principal.project !== null) {
    const inProject = PROJECT_PATH.exec(path);
    const reaches =
      SQL.test(path) ||
      /^\/api\/me\/?$/i.test(path) ||
      (inProject !== null &&
        decodeURIComponent(inProject[1]!).toLowerCase() === principal.project.toLowerCase());
    if (!reaches) return `This token reaches only project ${principal.project}`;
  }
  if (OWN.test(path)) return null;
  switch (principal.role) {
    case 'admin':
      return null;
    case 'editor':
      if (LLM_BUDGETS.test(path) && !isRead(method)) return 'Setting LLM budgets takes the admin role';
      return USERS.test(path) ? 'Managing users takes the admin role' : null;
    case 'analyst':
      if (USERS.test(path)) return 'Managing users takes the admin role';
      if (isRead(method) || ASKING.some((p) => p.test(path))) return null;
      return 'The analyst role reads and queries; changes take the editor role';
    case 'auditor':
      if ((isRead(method) && AUDIT.test(path)) || SQL.test(path)) return null;
      return 'The auditor role reads the event log and audit routes only';
    default: {
      const _exhaustive: never = principal.role;
      return _exhaustive;
    }
  }
};
