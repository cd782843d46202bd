import type { EventType, RecordedEvent, RecordedOf } from '../../events';
import { createdCells, type ResourceCreated } from './projectResource';
import { tableProjection } from './table';
import type { Column, Row, RowStore, TableLookup } from './types';

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
  for (const row of await rows.scan((r) => BigInt(r[deletion.column] as number | bigint) === id))
    rows.delete(String(row[key]));
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
 * A project resource's table (projectResource.ts): its creation event inserts its row, the cells
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
