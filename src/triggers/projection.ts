import { patchRow, projectResourceReads, projectResourceTable } from '../projection/resourceTable';
import { CREATED_AT, NAME_AND_PROJECT, RESOURCE_IDS } from '../projection/resourceColumns';
import { allHandled, selectRows, type RowOf } from '../projection/table';
import { columns } from '../projection/columns';
import type { TableReader } from '../projection/types';
import { maskSecrets } from '../shared/secrets';

/**
 * `triggers`: one row per live trigger (MindsDB's information_schema.TRIGGERS columns first), with
 * the last queue row claimed and the last firing's error.
 */
export const triggersTable = projectResourceTable({
  table: 'triggers',
  key: 'ID',
  columns: columns(
    NAME_AND_PROJECT,
    'DATABASE VARCHAR, TABLE VARCHAR, QUERY VARCHAR, LAST_ERROR VARCHAR NULL',
    RESOURCE_IDS,
    'COLUMNS JSON, KEY VARCHAR, OWNER JSON, UP_TO BIGINT, FIRINGS INTEGER',
    CREATED_AT,
  ),
  handles: [
    'TriggerCreated',
    'TriggerDeleted',
    'TriggerFired',
    'TriggerFiringFinished',
    'TriggerFiringFailed',
  ],
  createdBy: {
    type: 'TriggerCreated',
    cells: ({ data: d }) => ({
      DATABASE: d.database,
      TABLE: d.table,
      QUERY: maskSecrets(d.query, 'query'),
      LAST_ERROR: null,
      COLUMNS: d.columns,
      KEY: d.key,
      OWNER: d.owner,
      UP_TO: 0,
      FIRINGS: 0,
    }),
  },
  deletedBy: { type: 'TriggerDeleted', key: (e) => BigInt(e.data.triggerId) },
  apply: async (event, rows) => {
    switch (event.type) {
      case 'TriggerFired':
        return patchRow(rows, BigInt(event.data.triggerId), {
          UP_TO: event.data.upTo,
          FIRINGS: event.data.firing,
        });
      case 'TriggerFiringFinished':
        return patchRow(rows, BigInt(event.data.triggerId), { LAST_ERROR: null });
      case 'TriggerFiringFailed':
        return patchRow(rows, BigInt(event.data.triggerId), { LAST_ERROR: event.data.error });
      default:
        return allHandled(event);
    }
  },
});

export type TriggerRow = RowOf<typeof triggersTable.columns>;

export const allTriggerRows = async (reader: TableReader) =>
  selectRows(triggersTable, reader, 'SELECT * FROM triggers ORDER BY ID');

export const triggerRowByName = projectResourceReads(triggersTable).byName;

/** The live triggers on a table of `database` (named in any case), oldest first. */
export const triggerRowsWatching = (reader: TableReader, database: string) =>
  selectRows(triggersTable, reader, 'SELECT * FROM triggers WHERE lower(DATABASE) = lower(?) ORDER BY ID', [
    database,
  ]);
