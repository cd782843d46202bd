import { allHandled } from '../projection/table';
import { deletableTable, patchRow } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import { maskSecrets } from '../shared/secrets';

/** `ml_engines`: engines made with CREATE ML_ENGINE (the built-in ones are added by the SQL views). */
export const mlEnginesTable = deletableTable({
  table: 'ml_engines',
  key: 'ID',
  history: true,
  columns: columns('NAME VARCHAR, HANDLER VARCHAR, CONNECTION_DATA JSON, ID BIGINT, CREATED_AT TIMESTAMP'),
  handles: ['MlEngineCreated', 'MlEngineUpdated', 'MlEngineDeleted'],
  deletedBy: { type: 'MlEngineDeleted', key: (e) => BigInt(e.data.engineId) },
  apply: async (event, rows) => {
    switch (event.type) {
      case 'MlEngineCreated':
        rows.insert({
          ID: event.meta.position,
          NAME: event.data.name,
          HANDLER: event.data.handler,
          CONNECTION_DATA: maskSecrets(event.data.parameters),
          CREATED_AT: event.data.createdAt,
        });
        return;
      case 'MlEngineUpdated':
        return patchRow(rows, BigInt(event.data.engineId), {
          CONNECTION_DATA: maskSecrets(event.data.parameters),
        });
      default:
        return allHandled(event);
    }
  },
});
