import type { EventType, RecordedEvent, RecordedOf } from '../../events';
import { rowOfProjectByRef } from './rows';
import { selectRow, selectRows, tableProjection } from './table';
import type { Column, Row, RowStore, TableLookup, TableReader } from './types';

/*
 * A project resource's table, in one place: the cells its creating event fills (the columns every such
 * table has are parts of a column list, in resourceColumns.ts), the table's definition (the events
 * that make and remove its rows), a change to a row, and the reads every such table answers.
 */

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
const createdCells = ({ meta, data }: ResourceCreated) => ({
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

/*
 * Tables whose rows a resource's creation and deletion make and remove: the row handling every such
 * table repeated in its switch, declared once in its definition instead, beside the events it handles.
 */

/** How a table applies the events its definition leaves to it (`apply`, as `tableProjection`'s). */
type Apply<T extends EventType> = (
  event: RecordedOf<T>,
  rows: RowStore,
  lookup: TableLookup,
) => Promise<void> | void;

const isOf = <T extends EventType>(event: RecordedEvent, types: readonly T[]): event is RecordedOf<T> =>
  types.some((type) => type === event.type);

/**
 * Which rows a resource's deletion takes with it: the one row under `key`, or every row whose
 * `column` holds the resource's `id` (rows that belong to it: a job's runs, an agent's evaluations).
 */
type Deletion<D extends EventType, C extends readonly Column[]> = { readonly type: D } & (
  | { readonly key: (event: RecordedOf<D>) => string | bigint }
  | { readonly column: C[number]['name']; readonly id: (event: RecordedOf<D>) => number | bigint }
);

const deleteRows = async <D extends EventType, C extends readonly Column[]>(
  rows: RowStore,
  key: string,
  deletion: Deletion<D, C>,
  event: RecordedOf<D>,
) => {
  if ('key' in deletion) return rows.delete(deletion.key(event));
  const id = BigInt(deletion.id(event));
  for (const row of await rows.scan({ [deletion.column]: id })) rows.delete(String(row[key]));
};

/** A keyed table's definition, as `tableProjection`'s, with the event that deletes its rows. */
type DeletableDefinition<C extends readonly Column[], H extends readonly EventType[], D extends H[number]> = {
  readonly table: string;
  readonly key: C[number]['name'];
  readonly columns: C;
  readonly handles: H;
  readonly history?: boolean;
  readonly activity?: boolean;
  readonly deletedBy: Deletion<D, C>;
};

/**
 * A keyed table whose rows one event deletes (`deletedBy`, one of `handles`): a resource's table,
 * or a table of what belongs to a resource. `apply` is given the other events, as `tableProjection`'s
 * (its switch ends in `allHandled`).
 */
export const deletableTable = <
  const C extends readonly Column[],
  const H extends readonly EventType[],
  const D extends H[number],
>(
  definition: DeletableDefinition<C, H, D> & { readonly apply: Apply<Exclude<H[number], D>> },
) => {
  const { deletedBy, apply, ...table } = definition;
  const others = table.handles.filter((type): type is Exclude<H[number], D> => type !== deletedBy.type);
  return tableProjection({
    ...table,
    apply: (event, rows, lookup) => {
      if (isOf(event, [deletedBy.type])) return deleteRows(rows, table.key, deletedBy, event);
      if (isOf(event, others)) return apply(event, rows, lookup);
    },
  });
};

/** The events that create a project resource: their data names it and its project (`createdCells`). */
type CreationType = { [T in EventType]: RecordedOf<T> extends ResourceCreated ? T : never }[EventType];

const isCreation = <N extends CreationType>(
  event: RecordedEvent,
  type: N,
): event is RecordedOf<N> & ResourceCreated => event.type === type;

/**
 * A project resource's table: its creation event inserts its row, the cells
 * every resource has (`createdCells`) and its own (`createdBy.cells`), and its deletion event
 * deletes it (`deletableTable`). `apply` is given the other events.
 */
export const projectResourceTable = <
  const C extends readonly Column[],
  const H extends readonly EventType[],
  const N extends H[number] & CreationType,
  const D extends H[number],
>(
  definition: DeletableDefinition<C, H, D> & {
    readonly createdBy: {
      readonly type: N;
      cells(event: RecordedOf<N>, lookup: TableLookup): Row | Promise<Row>;
    };
    readonly apply: Apply<Exclude<H[number], N | D>>;
  },
) => {
  const { createdBy, apply, ...table } = definition;
  const others = table.handles.filter(
    (type): type is Exclude<H[number], N | D> => type !== createdBy.type && type !== table.deletedBy.type,
  );
  return deletableTable({
    ...table,
    apply: async (event, rows, lookup) => {
      if (isCreation(event, createdBy.type))
        rows.insert({ ...createdCells(event), ...(await createdBy.cells(event, lookup)) });
      else if (isOf(event, others)) await apply(event, rows, lookup);
    },
  });
};
