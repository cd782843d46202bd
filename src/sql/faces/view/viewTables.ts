import type { DuckDBConnection } from '@duckdb/node-api';
import { parseSelect, type AstNode } from '../../pipeline/ast';
import type { CatalogResolver } from '../../catalog/catalog';
import { deadlineIn, type Deadline } from '../../deadline';
import { SqlError, SqlErrorCode } from '../../errors';
import { resolveScopes } from '../../pipeline/scope';
import { selectText } from '../../pipeline/selectText';

/** How deep views may read views: past this, a view refers to itself (or nearly so). */
export const MAX_VIEW_DEPTH = 8;

/**
 * A view's query as a subquery the planner can put where the view is named: in DuckDB's dialect,
 * its bare table names qualified with the view's project (they mean that project's tables wherever
 * the view is read). A view holds no parameters and no native query.
 */
const viewSubquery = async (
  c: DuckDBConnection,
  catalog: CatalogResolver,
  view: { project: string; name: string; query: string },
  deadline: Deadline = deadlineIn(30_000),
): Promise<AstNode> => {
  const text = await selectText(catalog, view.query, view.project, deadline);
  if (text.natives.size > 0 || text.placeholders.length > 0 || text.predictOptions)
    throw new SqlError(
      SqlErrorCode.Invalid,
      `View ${view.project}.${view.name} holds a native query, a parameter or USING, which a view cannot`,
    );
  const statement = await parseSelect(c, text.sql);
  const { tables } = await resolveScopes(statement, { nodes: 20_000, pause: async () => deadline.check() });
  for (const t of tables) if (!t.schema_name && !t.catalog_name) t.schema_name = view.project;
  return statement;
};

/**
 * Puts each view a query names in its place, as a subquery (aliased with the view's name). Returns
 * whether any was: the planner then resolves the new text again, views inside views included.
 */
export const expandViews = async (
  c: DuckDBConnection,
  catalog: CatalogResolver,
  tables: AstNode[],
  db: string,
  deadline?: Deadline,
  /** The caller's: a view of a project it may not read is refused before its query is read. */
  policy?: { check(database: string, table: string): void },
): Promise<boolean> => {
  let expanded = false;
  for (const n of tables) {
    if (n.catalog_name) continue;
    const table = String(n.table_name);
    const view = await catalog.view(String(n.schema_name || db), table);
    if (!view) continue;
    policy?.check(view.project, table);
    const subquery = await viewSubquery(c, catalog, { ...view, name: table }, deadline);
    const alias = String(n.alias || table);
    for (const key of ['schema_name', 'table_name', 'catalog_name', 'at_clause']) delete n[key];
    n.type = 'SUBQUERY';
    n.subquery = subquery;
    n.alias = alias;
    n.column_name_alias ??= [];
    expanded = true;
  }
  return expanded;
};
