import { allHandled, selectRow, selectRows, type RowOf } from '../projection/table';
import { deletableTable, patchRow } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import type { TableReader } from '../projection/types';
import { nameKey } from '../shared/names';
import { maskSecrets } from '../shared/secrets';

/** `databases`: registered integrations (type "data"), secrets masked. */
export const databasesTable = deletableTable({
  table: 'databases',
  key: 'id',
  history: true,
  columns: columns(
    `id BIGINT, name VARCHAR, engine VARCHAR, connection_data JSON, created_at TIMESTAMP,
    updated_at TIMESTAMP, version BIGINT`,
  ),
  handles: ['DatabaseCreated', 'DatabaseUpdated', 'DatabaseDeleted'],
  deletedBy: { type: 'DatabaseDeleted', key: (e) => BigInt(e.data.databaseId) },
  apply: async (event, rows) => {
    switch (event.type) {
      case 'DatabaseCreated': {
        const d = event.data;
        rows.put({
          id: event.meta.position,
          name: d.name,
          engine: d.engine,
          connection_data: maskSecrets(d.parameters),
          created_at: d.createdAt,
          updated_at: d.createdAt,
          version: event.meta.position,
        });
        return;
      }
      case 'DatabaseUpdated': {
        const d = event.data;
        return patchRow(rows, BigInt(d.databaseId), {
          engine: d.engine,
          connection_data: maskSecrets(d.parameters),
          updated_at: d.updatedAt,
          version: event.meta.position,
        });
      }
      default:
        return allHandled(event);
    }
  },
});

export type DatabaseRow = RowOf<typeof databasesTable.columns>;

export const databaseRowByName = async (reader: TableReader, name: string) =>
  selectRow(databasesTable, reader, 'SELECT * FROM databases WHERE lower(name) = ?', [nameKey(name)]);

export const databaseRowById = async (reader: TableReader, id: number) =>
  selectRow(databasesTable, reader, 'SELECT * FROM databases WHERE id = ?', [BigInt(id)]);

export const databaseRows = async (reader: TableReader) =>
  selectRows(databasesTable, reader, 'SELECT * FROM databases ORDER BY id');

/** The lower-cased names of every registered integration. */
export const integrationNames = async (reader: TableReader) =>
  new Set(
    ((await reader.query('SELECT lower(name) AS name FROM databases')) as { name: string }[]).map(
      (r) => r.name,
    ),
  );

/**
 * Every registered external database's registration, by `nameKey` of its name, as the `databases`
 * table holds it (its secrets masked, not needed here): the relations a read-only SQL caller may
 * read there (src/sql/roles.ts, `withRegisteredRelations`).
 */
export const registrationsOf = async (
  reader: TableReader,
): Promise<ReadonlyMap<string, { engine: string; database: string | null; schema: string | null }>> => {
  const text = (v: unknown) => (v === undefined || v === null || v === '' ? null : String(v));
  return new Map(
    (await databaseRows(reader)).map((row) => {
      const parameters = JSON.parse(row.connection_data) as Record<string, unknown>;
      return [
        nameKey(row.name),
        { engine: row.engine, database: text(parameters.database), schema: text(parameters.schema) },
      ];
    }),
  );
};
