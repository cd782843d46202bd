import { rowOfProjectByRef } from './rows';
import { selectRow, selectRows } from './table';
import type { Column, Row, RowStore, TableReader } from './types';

/**
 * What every project resource's table holds besides its own columns: ID (the log position of its
 * creation), NAME, PROJECT, PROJECT_ID, CREATED_AT, UPDATED_AT and VERSION (the position of its last
 * change). Each table lists the ones it has where MindsDB's columns put them; a row keeps only the
 * columns its table lists (`storedRow`), so one definition serves them all.
 */
export type ResourceCreated = {
  readonly meta: { readonly position: bigint };
  readonly data: {
    readonly name: string;
    readonly project: string;
    readonly projectId: number;
    readonly createdAt: string;
  };
};

/** The cells every project resource's row starts with, from the event that created it. */
export const createdCells = ({ meta, data }: ResourceCreated) => ({
  ID: meta.position,
  NAME: data.name,
  PROJECT: data.project,
  PROJECT_ID: data.projectId,
  CREATED_AT: data.createdAt,
  UPDATED_AT: data.createdAt,
  VERSION: meta.position,
});

/** Changes the row under `key` (nothing when it is gone): `change` gives the cells that change. */
export const patchRow = async (rows: RowStore, key: string | bigint, change: Row | ((row: Row) => Row)) => {
  const row = await rows.get(key);
  if (row) rows.put({ ...row, ...(typeof change === 'function' ? change(row) : change) });
};

/** A resource changed (a rename included) at `at` by the event at `position`: its row says so. */
export const updatedRow = (
  rows: RowStore,
  id: number | bigint,
  position: bigint,
  at: string,
  change: Row | ((row: Row) => Row),
) =>
  patchRow(rows, BigInt(id), (row) => ({
    ...(typeof change === 'function' ? change(row) : change),
    UPDATED_AT: at,
    VERSION: position,
  }));

/**
 * The reads every project resource's table answers, typed by its columns: a project's rows in id
 * order, one by id or name (`byRef`: an id wins over a name of digits), by id or name alone, and
 * some by id.
 */
export const projectResourceReads = <C extends readonly Column[]>(projection: {
  readonly table: string;
  readonly columns: C;
}) => {
  const from = `SELECT * FROM ${projection.table} WHERE PROJECT_ID = ?`;
  return {
    ofProject: (reader: TableReader, projectId: number | bigint) =>
      selectRows(projection, reader, `${from} ORDER BY ID`, [BigInt(projectId)]),
    byRef: (reader: TableReader, projectId: number | bigint, ref: string) =>
      rowOfProjectByRef(reader, projection, projectId, ref),
    byId: (reader: TableReader, projectId: number | bigint, id: bigint) =>
      selectRow(projection, reader, `${from} AND ID = ?`, [BigInt(projectId), id]),
    byName: (reader: TableReader, projectId: number | bigint, name: string) =>
      selectRow(projection, reader, `${from} AND lower(NAME) = lower(?)`, [BigInt(projectId), name]),
    byIds: async (reader: TableReader, projectId: number | bigint, ids: readonly bigint[]) =>
      ids.length === 0
        ? []
        : selectRows(projection, reader, `${from} AND ID IN (${ids.map(() => '?').join(', ')}) ORDER BY ID`, [
            BigInt(projectId),
            ...ids,
          ]),
  };
};
