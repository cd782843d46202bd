import { SqlError, SqlErrorCode } from '../../errors';
import type { TableFace } from '../face';

/** `FROM integration ( … )`: a native query, whose text goes to its database as written. */
export const nativeQueryFace: TableFace = {
  kind: 'native',
  recognise: async ({ node, table, native }) =>
    native && {
      place: 'external',
      ref: { node, integration: native.integration, schema: null, table, native: native.sql },
    },
};

/** A table of a registered database: `db.table`, or `db.schema.table` (refused when `db` is unknown). */
export const integrationFace: TableFace = {
  kind: 'integration',
  recognise: async ({ node, catalog: catalogName, schema, table, database }, { catalog }) => {
    if (catalogName) {
      const integration = await catalog.integration(catalogName);
      if (!integration)
        throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${catalogName} does not exist`);
      return { place: 'external', ref: { node, integration, schema, table } };
    }
    const integration = await catalog.integration(database);
    return integration ? { place: 'external', ref: { node, integration, schema: null, table } } : undefined;
  },
};
