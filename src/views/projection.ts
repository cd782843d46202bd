import { createdCells, projectResourceReads, updatedRow } from '../projection/projectResource';
import { CHANGE_STAMPS, NAME_AND_PROJECT, RESOURCE_IDS } from '../projection/resourceColumns';
import { allHandled, type RowOf } from '../projection/table';
import { deletableTable } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import { maskSecrets } from '../shared/secrets';

/** `views`: one row per live view (MindsDB's information_schema.VIEWS columns first). */
export const viewsTable = deletableTable({
  table: 'views',
  key: 'ID',
  history: true,
  columns: columns(NAME_AND_PROJECT, 'QUERY VARCHAR', RESOURCE_IDS, CHANGE_STAMPS),
  handles: ['ViewCreated', 'ViewUpdated', 'ViewDeleted'],
  deletedBy: { type: 'ViewDeleted', key: (e) => BigInt(e.data.viewId) },
  apply: async (event, rows) => {
    switch (event.type) {
      case 'ViewCreated': {
        const d = event.data;
        rows.insert({ ...createdCells(event), QUERY: maskSecrets(d.query, 'query') });
        return;
      }
      case 'ViewUpdated': {
        const d = event.data;
        const cells = { NAME: d.name, QUERY: maskSecrets(d.query, 'query') };
        return updatedRow(rows, d.viewId, event.meta.position, d.updatedAt, cells);
      }
      default:
        return allHandled(event);
    }
  },
});

export type ViewRow = RowOf<typeof viewsTable.columns>;

const reads = projectResourceReads(viewsTable);
export const viewRowsOfProject = reads.ofProject;
export const viewRowByName = reads.byName;
