import type { ObjectColumn } from './catalog';
import { deadlineIn } from './deadline';
import { prepare } from './plan';
import { runSelect, type SelectDeps, type SelectInput, type SelectLimits } from './select';
import { quoteIdent } from '../shared/quoting';

/** A view that takes longer to describe (a slow external database) lists no columns until described again. */
const DESCRIBE_TIMEOUT_MS = 5_000;

/**
 * The columns of a project's view or knowledge base as `SELECT * FROM project.name` answers them,
 * for information_schema.COLUMNS (and so psql's `\d`, DBeaver's and Grafana's column pickers).
 *
 * The query is planned; one that reads only the read model is described by DuckDB without running
 * (its prepared statement's columns). One that also searches a knowledge base or reads an external
 * database runs with LIMIT 0, as a view's query is checked when it is made (a knowledge base's
 * view is made without embedding anything; one external database is sent the LIMIT 0). A view that
 * queries a model or an agent is not run: its predictions or answers would be computed for the
 * rows it reads only to be thrown away; its columns are not listed (null).
 *
 * Run without the caller's policy: the columns are kept for every caller, and each is shown only
 * the objects of the projects it may list (the COLUMNS view joins them to the scoped rows).
 */
export const objectColumnsOf =
  (deps: SelectDeps, inputOf: (sql: string, db: string) => SelectInput, limits: SelectLimits) =>
  async (project: string, name: string): Promise<ObjectColumn[] | null> => {
    const sql = `SELECT * FROM ${quoteIdent(project)}.${quoteIdent(name)} LIMIT 0`;
    const timeoutMs = Math.min(limits.timeoutMs, DESCRIBE_TIMEOUT_MS);
    const deadline = deadlineIn(timeoutMs);
    const described = await deps.duck.withReader(
      async (c): Promise<ObjectColumn[] | null | undefined> => {
        const plan = await prepare(c, deps.catalog, sql, project, new Map(), deadline);
        if (plan.kind === 'model') return null;
        if (plan.kind !== 'local' || plan.searches.length > 0) return undefined;
        const statement = await c.prepare(plan.sql);
        try {
          const count = statement.columnCount;
          // The plan's names win where it has them, as in an answer (runSelect's namesOf).
          const names = plan.names?.length === count ? plan.names : [];
          return Array.from({ length: count }, (_, i) => ({
            name: names[i] ?? statement.columnName(i),
            type: String(statement.columnType(i)),
          }));
        } finally {
          statement.destroySync();
        }
      },
      { sql: true },
    );
    if (described !== undefined) return described;
    const answer = await runSelect(deps, inputOf(sql, project), {
      ...limits,
      timeoutMs,
      deadline,
      policy: undefined,
    });
    return answer.column_names.map((column, i) => ({ name: column, type: answer.column_types[i]! }));
  };
