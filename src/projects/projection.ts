import type { TableProjection, TableReader } from '../projection/types';
import { nameKey } from '../shared/names';

/** `projects`: one row per live project. */
export const projectsTable: TableProjection = {
  table: 'projects',
  key: 'id',
  history: true,
  columns: [
    { name: 'id', type: 'BIGINT' },
    { name: 'name', type: 'VARCHAR' },
    { name: 'created_at', type: 'TIMESTAMP' },
    { name: 'version', type: 'BIGINT' },
  ],
  handles: ['ProjectCreated', 'ProjectDeleted'],
  apply: (event, rows) => {
    switch (event.type) {
      case 'ProjectCreated':
        rows.insert({
          id: event.meta.position,
          name: event.data.name,
          created_at: event.data.createdAt,
          version: event.meta.position,
        });
        return;
      case 'ProjectDeleted':
        rows.delete(BigInt(event.data.projectId));
        return;
    }
  },
};

export type ProjectRow = { id: bigint; name: string; created_at: Date; version: bigint };

export const projectRowByName = async (reader: TableReader, name: string) =>
  ((await reader.query('SELECT * FROM projects WHERE lower(name) = ?', [nameKey(name)])) as ProjectRow[])[0];

export const projectRows = async (reader: TableReader) =>
  (await reader.query('SELECT * FROM projects ORDER BY id')) as ProjectRow[];
