import type { ViewsService } from './service';
import {
  byName,
  dropByName,
  ownProject,
  type SqlCatalog,
  type SqlLookups,
  type StatementHandlers,
} from '../sql/handlers';

/** CREATE [OR REPLACE] VIEW, ALTER VIEW and DROP VIEW, through the views service (as REST). */
export const viewStatements = (views: Pick<ViewsService, 'create' | 'update' | 'remove'>) =>
  ({
    CreateView: byName((project, name, statement) =>
      views.create(project, {
        name,
        query: statement.query,
        replace: statement.replace,
        ifNotExists: statement.ifNotExists,
      }),
    ),
    AlterView: byName((project, name, statement) => views.update(project, name, { query: statement.query })),
    DropView: dropByName(views.remove),
  }) satisfies StatementHandlers<'CreateView' | 'AlterView' | 'DropView'>;

/** information_schema.VIEWS, and every project's views table. */
export const viewCatalog = {
  informationSchema: { VIEWS: `SELECT NAME, PROJECT, QUERY FROM main.views ORDER BY ID` },
  projectTables: { views: 'VIEWS' },
  scopedRows: { views: ownProject },
} satisfies SqlCatalog;

/** A view queried as a table runs its query. */
export const viewLookup = (views: Pick<ViewsService, 'queryOf'>) =>
  ({
    viewQuery: (project, name) => views.queryOf(project, name),
  }) satisfies Pick<SqlLookups, 'viewQuery'>;
