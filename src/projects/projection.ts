import { selectRow, selectRows, type RowOf } from '../projection/table';
import { deletableTable } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import type { TableReader } from '../projection/types';
import { nameKey } from '../shared/names';

/** `projects`: one row per live project. */
export const projectsTable = deletableTable({
  table: 'projects',
  key: 'id',
  history: true,
  columns: columns('id BIGINT, name VARCHAR, created_at TIMESTAMP, version BIGINT'),
  handles: ['ProjectCreated', 'ProjectDeleted'],
  deletedBy: { type: 'ProjectDeleted', key: (e) => BigInt(e.data.projectId) },
  apply: (event, rows) =>
    rows.insert({
      id: event.meta.position,
      name: event.data.name,
      created_at: event.data.createdAt,
      version: event.meta.position,
    }),
});

export type ProjectRow = RowOf<typeof projectsTable.columns>;

export const projectRowByName = async (reader: TableReader, name: string) =>
  selectRow(projectsTable, reader, 'SELECT * FROM projects WHERE lower(name) = ?', [nameKey(name)]);

export const projectRows = async (reader: TableReader) =>
  selectRows(projectsTable, reader, 'SELECT * FROM projects ORDER BY id');
