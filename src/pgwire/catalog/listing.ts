import type { ClientOf, SqlEngine } from '../../doorway/engine';
import type { Listing } from './shadowCatalog';

/** The engine refused a listing (the client's role, a database gone): its code and message. */
export class ListingFailed extends Error {
  constructor(
    readonly engineCode: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ListingFailed';
  }
}

/**
 * What the engine lists for a client, as the catalog shadow is built from it: the databases
 * (SHOW DATABASES), every table's columns in order (information_schema.COLUMNS, external
 * databases' tables, projects' views and knowledge bases included), and which of those tables are
 * views, with their queries (information_schema.TABLES and VIEWS: psql's `\dv` lists views apart
 * from tables), asked as that client (its role applies).
 */
export const listCatalog = async (
  engine: SqlEngine,
  database: string,
  client: ClientOf,
  signal: AbortSignal,
): Promise<Listing> => {
  const listed = async (query: string) => {
    const answer = await engine.execute(query, { db: database }, {}, signal, client);
    if (answer.type !== 'table')
      throw new ListingFailed(
        answer.type === 'error' ? answer.error_code : undefined,
        answer.type === 'error' ? answer.error_message : `${query} answered no rows`,
      );
    return answer.data;
  };
  return {
    databases: (await listed('SHOW DATABASES')).map((r) => String(r[0])),
    columns: (
      await listed(
        'SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION',
      )
    ).map((r) => ({ schema: String(r[0]), table: String(r[1]), column: String(r[2]), type: String(r[3]) })),
    views: (
      await listed(
        `SELECT t.TABLE_SCHEMA, t.TABLE_NAME, v.QUERY FROM information_schema.TABLES t
         LEFT JOIN information_schema.VIEWS v ON v.PROJECT = t.TABLE_SCHEMA AND v.NAME = t.TABLE_NAME
         WHERE t.TABLE_TYPE = 'VIEW' ORDER BY 1, 2`,
      )
    ).map((r) => ({
      schema: String(r[0]),
      table: String(r[1]),
      definition: r[2] === null ? null : String(r[2]),
    })),
  };
};
