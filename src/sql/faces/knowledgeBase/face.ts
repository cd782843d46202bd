import type { TableFace } from '../face';

/** A knowledge base: its search is cut out of the WHERE clause and made before the query reads it. */
export const knowledgeBaseFace: TableFace = {
  kind: 'knowledgeBase',
  recognise: async ({ node, catalog: catalogName, table, database }, { catalog }) => {
    const found = catalogName ? undefined : await catalog.knowledgeBase(database, table);
    return found && { place: 'search', ref: { node, project: found.project, name: found.name } };
  },
};
