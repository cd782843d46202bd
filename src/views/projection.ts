import { projectResourceReads, updatedRow, projectResourceTable } from '../projection/resourceTable';
import { CHANGE_STAMPS, NAME_AND_PROJECT, RESOURCE_IDS } from '../projection/resourceColumns';
import type { RowOf } from '../projection/table';
import { columns } from '../projection/columns';
import { maskSecrets } from '../shared/secrets';

/** `views`: one row per live view (MindsDB's information_schema.VIEWS columns first). */
export const viewsTable = projectResourceTable({
  table: 'views',
  key: 'ID',
  history: true,
  columns: columns(NAME_AND_PROJECT, 'QUERY VARCHAR', RESOURCE_IDS, CHANGE_STAMPS),
  handles: ['ViewCreated', 'ViewUpdated', 'ViewDeleted'],
  createdBy: { type: 'ViewCreated', cells: ({ data: d }) => ({ QUERY: maskSecrets(d.query, 'query') }) },
  deletedBy: { type: 'ViewDeleted', key: (e) => BigInt(e.data.viewId) },
  apply: ({ data: d, meta }, rows) => {
    const cells = { NAME: d.name, QUERY: maskSecrets(d.query, 'query') };
    return updatedRow(rows, d.viewId, meta.position, d.updatedAt, cells);
  },
});

export type ViewRow = RowOf<typeof viewsTable.columns>;

const reads = projectResourceReads(viewsTable);
export const viewRowsOfProject = reads.ofProject;
export const viewRowByName = reads.byName;
