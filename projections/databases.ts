import type { DatabaseCreated, DatabaseDeleted, DatabaseUpdated } from '../events';
import type { TableProjection } from '../src/projection/types';
import { maskSecrets } from '../src/shared/secrets';

/** `databases`: registered integrations (type "data"), secrets masked. */
export const databasesProjection: TableProjection = {
  table: 'databases',
  key: 'id',
  columns: [
    { name: 'id', type: 'BIGINT' },
    { name: 'name', type: 'VARCHAR' },
    { name: 'engine', type: 'VARCHAR' },
    { name: 'connection_data', type: 'JSON' },
    { name: 'created_at', type: 'TIMESTAMP' },
    { name: 'updated_at', type: 'TIMESTAMP' },
    { name: 'version', type: 'BIGINT' },
  ],
  handles: ['DatabaseCreated', 'DatabaseUpdated', 'DatabaseDeleted'],
  apply: async (event, rows) => {
    switch (event.type) {
      case 'DatabaseCreated': {
        const d = (event as unknown as DatabaseCreated).data;
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
        const d = (event as unknown as DatabaseUpdated).data;
        const row = await rows.get(BigInt(d.databaseId));
        if (!row) return;
        rows.put({
          ...row,
          engine: d.engine,
          connection_data: maskSecrets(d.parameters),
          updated_at: d.updatedAt,
          version: event.meta.position,
        });
        return;
      }
      case 'DatabaseDeleted':
        rows.delete(BigInt((event as unknown as DatabaseDeleted).data.databaseId));
        return;
    }
  },
};
