import { catalogFaceOf } from '../../catalog/catalogListing';
import { readLocally, type TableFace } from '../face';

/**
 * A resource table AS OF a log position: its rows then, read from the history tables
 * (src/sql/pipeline/asOf.ts).
 */
export const historyFace: TableFace = {
  kind: 'history',
  recognise: async ({ node, asOf, database }, { catalog, project, addAsOf }) => {
    if (!asOf) return undefined;
    const query = await catalog.asOf(database, asOf.table, asOf.position, project ?? null);
    node.alias = String(node.alias || asOf.table);
    readLocally(node, '', addAsOf(query));
    return { place: 'local' };
  },
};

/**
 * Last in the list, it answers every name left: information_schema's tables, a project's tables
 * (`proj.models`, …), log.jobs_history, or a refusal naming what does not exist.
 */
export const systemFace: TableFace = {
  kind: 'system',
  recognise: async ({ node, database, table }, { c, catalog, project }) => {
    const physical = await catalog.resolve(database, table, c, project ?? null);
    readLocally(node, physical.schema, physical.table);
    // A project-scoped caller reaches no external database: their relations are not listed to it.
    const listing = database.toLowerCase() === 'information_schema' ? catalogFaceOf(table) : undefined;
    return listing && project === undefined ? { place: 'local', listing } : { place: 'local' };
  },
};
