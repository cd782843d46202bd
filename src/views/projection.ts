import { allHandled, selectRow, selectRows, tableProjection, type RowOf } from '../projection/table';
import type { TableReader } from '../projection/types';
import { maskSecrets } from '../shared/secrets';

/** `views`: one row per live view (MindsDB's information_schema.VIEWS columns first). */
export const viewsTable = tableProjection({
  table: 'views',
  key: 'ID',
  history: true,
  columns: [
    { name: 'NAME', type: 'VARCHAR' },
    { name: 'PROJECT', type: 'VARCHAR' },
    { name: 'QUERY', type: 'VARCHAR' },
    { name: 'ID', type: 'BIGINT' },
    { name: 'PROJECT_ID', type: 'BIGINT' },
    { name: 'CREATED_AT', type: 'TIMESTAMP' },
    { name: 'UPDATED_AT', type: 'TIMESTAMP' },
  ],
  handles: ['ViewCreated', 'ViewUpdated', 'ViewDeleted'],
  apply: async (event, rows) => {
    switch (event.type) {
      case 'ViewCreated': {
        const d = event.data;
        rows.insert({
          ID: event.meta.position,
          NAME: d.name,
          PROJECT: d.project,
          PROJECT_ID: d.projectId,
          QUERY: maskSecrets(d.query, 'query'),
          CREATED_AT: d.createdAt,
          UPDATED_AT: d.createdAt,
        });
        return;
      }
      case 'ViewUpdated': {
        const d = event.data;
        const row = await rows.get(BigInt(d.viewId));
        if (!row) return;
        rows.put({ ...row, NAME: d.name, QUERY: maskSecrets(d.query, 'query'), UPDATED_AT: d.updatedAt });
        return;
      }
      case 'ViewDeleted':
        rows.delete(BigInt(event.data.viewId));
        return;
      default:
        return allHandled(event);
    }
  },
});

export type ViewRow = RowOf<typeof viewsTable.columns>;

export const viewRowsOfProject = async (reader: TableReader, projectId: number) =>
  selectRows(viewsTable, reader, 'SELECT * FROM views WHERE PROJECT_ID = ? ORDER BY ID', [BigInt(projectId)]);

export const viewRowByName = async (reader: TableReader, projectId: number, name: string) =>
  selectRow(viewsTable, reader, 'SELECT * FROM views WHERE PROJECT_ID = ? AND lower(NAME) = lower(?)', [
    BigInt(projectId),
    name,
  ]);
