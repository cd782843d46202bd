import type { Principal } from '../../shared/requestContext';
import { nameKey } from '../../shared/names';
import { SqlError, SqlErrorCode } from '../errors';
import type { TablePolicy } from '../pipeline/plan';
import { checkReadOnlyRelation, type Registration } from '../faces/integration/pushdownAllowList';

/**
 * The SQL endpoint's half of the roles (docs/security.md "Sign-in and roles"): decided on what was parsed,
 * never on the text. SELECTs are checked table by table on DuckDB's parse tree (a `TablePolicy`):
 * - analyst: every table, models and agents (predictions), never a native query on a registered
 *   database (those run with its stored credentials: admin and editor only);
 * - auditor: information_schema.EVENTS only (the log; AS OF tables will join it); every row it reads
 *   comes from there, so table functions, row generators, recursive CTEs and LLM() are refused
 *   too, with or without a FROM clause (src/sql/pipeline/scope.ts, `refuseForAuditor`);
 * - a project-scoped token: its project's tables and information_schema only, where every table
 *   (SHOW and DESCRIBE too, which read it) answers its project's rows only (catalog.ts).
 * What any of these pushes down to an external database calls only the functions of
 * src/sql/faces/integration/pushdownAllowList.ts, in a read-only transaction (`readOnlyRole`), and names only
 * relations of the database (and schema) it was registered with (`checkReadOnlyRelation`: never
 * the server's catalogs, another database or schema); so does a fetched external table.
 * MindsDB's own statements: SHOW/DESCRIBE/USE/SET for readers, everything else for admin and editor.
 */
const refuse = (message: string) => new SqlError(SqlErrorCode.Forbidden, message);

/** Every registered external database's registration, by `nameKey` of its name. */
export type Registrations = ReadonlyMap<string, Registration>;

/**
 * `policy` (a caller who may not write: `readOnlyRole`) also held to the relations of each
 * external database's registration: `check` is asked every table reference DuckDB parsed, in
 * subqueries, CTEs and joins too, as `(database, table)` or, for `db.schema.table`,
 * `(db, 'schema.table')`.
 */
export const withRegisteredRelations = (
  policy: TablePolicy | undefined,
  registrations: Registrations,
): TablePolicy | undefined => {
  const role = policy?.readOnlyRole;
  if (!policy || role === undefined) return policy;
  return {
    ...policy,
    check: (database, table) => {
      policy.check(database, table);
      const registration = registrations.get(nameKey(database));
      if (!registration || table === '(native query)') return;
      const dot = table.indexOf('.');
      if (dot < 0) checkReadOnlyRelation(registration, database, null, table, role);
      else checkReadOnlyRelation(registration, database, table.slice(0, dot), table.slice(dot + 1), role);
    },
  };
};

/** The caller's table policy, without the external relations (`callerPolicyOf` adds them). */
export const rolePolicy = (principal: Principal | undefined): TablePolicy | undefined => {
  if (!principal) return undefined;
  const { role, project } = principal;
  if ((role === 'admin' || role === 'editor') && project === null) return undefined;
  return {
    ...(project !== null ? { project } : {}),
    // Every caller here may not write in SQL (a scoped token runs reading statements only).
    readOnlyRole: role,
    check: (database, table) => {
      const db = nameKey(database);
      if (table === '(native query)' && role !== 'admin' && role !== 'editor')
        throw refuse(
          `Native queries on ${database} run with its stored credentials: they take the editor or admin role (yours: ${role})`,
        );
      if (role === 'auditor' && !(db === 'information_schema' && table.toLowerCase() === 'events'))
        throw refuse(`The auditor role reads information_schema.EVENTS only, not ${database}.${table}`);
      if (project !== null && db !== nameKey(project) && db !== 'information_schema')
        throw refuse(`This token reaches only project ${project}, not ${database}`);
    },
  };
};

/** The caller's policy (`rolePolicy`), the registrations read only for a caller who has one. */
export const callerPolicyOf = async (
  principal: Principal | undefined,
  registrations: () => Promise<Registrations>,
): Promise<TablePolicy | undefined> => {
  const policy = rolePolicy(principal);
  return policy && withRegisteredRelations(policy, await registrations());
};

/** MindsDB statement kinds a caller may run besides SELECTs (which their policy checks). */
export const checkStatement = (principal: Principal | undefined, kind: string) => {
  if (!principal) return;
  const reading = kind === 'Show' || kind === 'Describe' || kind === 'Use' || kind === 'Set';
  if (principal.role === 'auditor') {
    if (kind === 'Use' || kind === 'Set') return;
    throw refuse('The auditor role runs SELECTs on information_schema.EVENTS only');
  }
  if (reading) return;
  // What an LLM may spend is the admin's to say (docs/llm-models.md "Budgets").
  if ((kind === 'CreateLlmBudget' || kind === 'DropLlmBudget') && principal.role !== 'admin')
    throw refuse(`LLM budgets are set by the admin role (yours: ${principal.role})`);
  if (principal.role === 'analyst')
    throw refuse(
      'The analyst role is read-only (SELECT, SHOW, DESCRIBE, predictions): this statement takes editor',
    );
  if (principal.project !== null)
    throw refuse(
      'A project-scoped token runs reading statements only in SQL; use the REST routes under its project',
    );
};
