import type { EventType, RecordedEvent, RecordedOf } from '../../events';
import type {
  SchemaApplyRest,
  Column,
  RowStore,
  SchemaProjection,
  TableLookup,
  TableProjection,
  TableReader,
} from './types';

/**
 * A projection's event list and its `switch` say the same thing, checked by the compiler: `apply`
 * is given only the events of its `handles` list (a `case` naming another type does not compile),
 * and its switch ends in `default: return allHandled(event)`, which compiles only once every listed
 * type has its case (`event` is `never` there). Neither can drift from the other.
 */
type HandledEvent<H extends readonly EventType[] | 'all'> = H extends readonly (infer T extends EventType)[]
  ? RecordedOf<T>
  : RecordedEvent;

/** The end of a switch over a projection's handled events: compiles only when every one has its case. */
export const allHandled = (event: never): void => void event;

const handledBy = <H extends readonly EventType[] | 'all'>(handles: H) => {
  const listed = handles === 'all' ? null : new Set<string>(handles);
  return (event: RecordedEvent): event is HandledEvent<H> => listed === null || listed.has(event.type);
};

/** What a cell of each column type reads back as through `TableReader.query` (JSON as its text). */
type CellTypes = {
  VARCHAR: string;
  JSON: string;
  BIGINT: bigint;
  INTEGER: number;
  DOUBLE: number;
  BOOLEAN: boolean;
  TIMESTAMP: Date;
  'VARCHAR[]': string[];
  'BIGINT[]': bigint[];
};

type CellOf<C extends Column> =
  | (C extends { readonly values: readonly (infer V)[] } ? V : CellTypes[C['type']])
  | (C extends { readonly nullable: true } ? null : never);

/** A row of a table as its queries read it, derived from its column list. */
export type RowOf<Cs extends readonly Column[]> = { -readonly [C in Cs[number] as C['name']]: CellOf<C> };

/** A table projection whose column list is known to the compiler, so its row type can be derived. */
type TypedTableProjection<C extends readonly Column[]> = TableProjection & { readonly columns: C };

/**
 * A table projection, defined with its column list as data (written `columns('ID BIGINT, NAME
 * VARCHAR NULL', …)`, columns.ts; `RowOf<typeof table.columns>` is its row type) and its handled
 * events checked against its switch (`HandledEvent`, `allHandled`).
 */
export const tableProjection = <
  const C extends readonly Column[],
  const H extends readonly EventType[] | 'all',
>(definition: {
  readonly table: string;
  readonly key: C[number]['name'] | null;
  readonly columns: C;
  readonly handles: H;
  readonly history?: boolean;
  readonly activity?: boolean;
  apply(event: HandledEvent<NoInfer<H>>, rows: RowStore, lookup: TableLookup): Promise<void> | void;
  finish?(rows: RowStore, lookup: TableLookup): Promise<void> | void;
}): TypedTableProjection<C> => {
  const isHandled = handledBy(definition.handles);
  const { apply } = definition;
  return {
    ...definition,
    apply: (event, rows, lookup) => (isHandled(event) ? apply(event, rows, lookup) : undefined),
  };
};

/** A schema projection whose handled events are checked against its switch, as `tableProjection`'s. */
export const schemaProjection = <const H extends readonly EventType[]>(
  definition: Omit<SchemaProjection, 'handles' | 'apply'> & {
    readonly handles: H;
    apply(event: HandledEvent<H>, ...rest: SchemaApplyRest): Promise<void>;
  },
): SchemaProjection => {
  const isHandled = handledBy(definition.handles);
  const { apply } = definition;
  return {
    ...definition,
    apply: async (event, ...rest) => {
      if (isHandled(event)) await apply(event, ...rest);
    },
  };
};

type Params = Parameters<TableReader['query']>[1];

/**
 * The rows `sql` reads from `table`, typed by its columns: `sql` selects every column of that
 * table (`SELECT * FROM <table> …`, or `SELECT * EXCLUDE (…)` of what only adds columns to it). The
 * one place a query's rows are taken for a table's rows.
 */
export const selectRows = async <C extends readonly Column[]>(
  table: { readonly columns: C },
  reader: TableReader,
  sql: string,
  params?: Params,
): Promise<RowOf<C>[]> => (await reader.query(sql, params)) as RowOf<C>[];

/** The first row `sql` reads from `table` (as `selectRows`), if any. */
export const selectRow = async <C extends readonly Column[]>(
  table: { readonly columns: C },
  reader: TableReader,
  sql: string,
  params?: Params,
): Promise<RowOf<C> | undefined> => (await selectRows(table, reader, sql, params))[0];

/**
 * Some columns of `table`'s rows: `SELECT <names> <rest>`, `rest` reading from that table
 * (`FROM <table> WHERE …`). The select list is made from the names, so the type follows it.
 */
export const selectColumns = async <C extends readonly Column[], const N extends C[number]['name']>(
  table: { readonly columns: C },
  names: readonly N[],
  reader: TableReader,
  rest: string,
  params?: Params,
): Promise<Pick<RowOf<C>, N>[]> =>
  (await reader.query(`SELECT ${names.join(', ')} ${rest}`, params)) as Pick<RowOf<C>, N>[];
