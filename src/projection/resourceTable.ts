import type { EventType, MindledgerEvent, Recorded, RecordedEvent } from '../../events';
import { tableProjection } from './table';
import type { Column, RowStore, TableLookup } from './types';

type EventOf<T extends EventType> = Recorded<Extract<MindledgerEvent, { type: T }>>;

const isOf = <T extends EventType>(event: RecordedEvent, types: readonly T[]): event is EventOf<T> =>
  types.some((type) => type === event.type);

/**
 * Which rows a resource's deletion takes with it: the one row under `key`, or every row whose
 * `column` holds the resource's `id` (rows that belong to it: a job's runs, an agent's evaluations).
 */
type Deletion<D extends EventType, C extends readonly Column[]> = { readonly type: D } & (
  | { readonly key: (event: EventOf<D>) => string | bigint }
  | { readonly column: C[number]['name']; readonly id: (event: EventOf<D>) => number | bigint }
);

const deleteRows = async <D extends EventType, C extends readonly Column[]>(
  rows: RowStore,
  key: string,
  deletion: Deletion<D, C>,
  event: EventOf<D>,
) => {
  if ('key' in deletion) return rows.delete(deletion.key(event));
  const id = BigInt(deletion.id(event));
  for (const row of await rows.scan((r) => BigInt(r[deletion.column] as number | bigint) === id))
    rows.delete(String(row[key]));
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
>(definition: {
  readonly table: string;
  readonly key: C[number]['name'];
  readonly columns: C;
  readonly handles: H;
  readonly history?: boolean;
  readonly activity?: boolean;
  readonly deletedBy: Deletion<D, C>;
  apply(event: EventOf<Exclude<H[number], D>>, rows: RowStore, lookup: TableLookup): Promise<void> | void;
}) => {
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
