import type { TableFace } from '../face';

/** A model queried as a table (its predictions), or one of its versions: `project.model.3`. */
export const modelFace: TableFace = {
  kind: 'model',
  recognise: async ({ node, catalog: catalogName, schema, table, database }, { catalog }) => {
    // `project.model.3`: a model version, which DuckDB reads as catalog.schema.table.
    if (catalogName) {
      const project = /^\d+$/.test(table) ? await catalog.model(catalogName, schema) : undefined;
      return project
        ? { place: 'computed', ref: { node, project, name: `${schema}.${table}`, kind: 'model' } }
        : undefined;
    }
    const project = await catalog.model(database, table);
    return project ? { place: 'computed', ref: { node, project, name: table, kind: 'model' } } : undefined;
  },
};
