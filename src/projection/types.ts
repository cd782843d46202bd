import type { DuckDBConnection } from '@duckdb/node-api';
import type { EventType, RecordedEvent } from '../../events';
import type { Duck } from '../duckdb/database';
import type { EventLog } from '../eventlog/types';

/** The types a projection's column can have (DuckDB's names). */
export const COLUMN_TYPES = [
  'VARCHAR',
  'BIGINT',
  'INTEGER',
  'DOUBLE',
  'BOOLEAN',
  'TIMESTAMP',
  'JSON',
  'VARCHAR[]',
  'BIGINT[]',
] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];
export type Column = {
  readonly name: string;
  readonly type: ColumnType;
  /**
   * Types only (the table's SQL is the same either way): the column may hold NULL (`NAME TYPE NULL`
   * in a `columns(...)` text), so its cell is typed `… | null` in the row type derived from the
   * columns (`RowOf`, table.ts).
   */
  readonly nullable?: boolean;
  /** Types only: the values a VARCHAR column holds, which its cell is typed as (`RowOf`). */
  readonly values?: readonly string[];
};
export type Row = Record<string, unknown>;

/** The rows of one table as a projection sees them while a batch is applied. */
export interface RowStore {
  /** The current row for a key: this batch's pending version if any, else what the table holds. */
  get(key: string | bigint): Promise<Row | undefined>;
  /** Inserts or replaces the row with this row's key (append-only tables: appends). */
  put(row: Row): void;
  /**
   * Adds a row whose key no stored row can hold (an id taken from this event's own position): like
   * `put`, but writing it deletes nothing first (a DELETE per table per batch saved).
   */
  insert(row: Row): void;
  delete(key: string | bigint): void;
  /**
   * The current rows whose cells equal `where`'s (null: is null; a list column: holds the value) and
   * that pass `filter`, in key order (table rows overlaid with this batch's changes). The table reads
   * `where` itself: a whole table read per event made a replay quadratic in the resources it holds.
   */
  scan(where: Row, filter?: (row: Row) => boolean): Promise<Row[]>;
  /**
   * A hint: these keys will be read (`get`) in this batch, so read them from the table at once
   * rather than one query each. `get` answers the same with or without it.
   */
  prefetch?(keys: readonly string[]): Promise<void>;
}

/** Another projection's rows as they stand at this point of the batch (projections apply in order). */
export type TableLookup = (table: string) => RowStore;

/**
 * One DuckDB table fed by events. `apply` is the whole projection: it reads the event and the
 * current rows and says which rows change. The runner batches, writes and checkpoints.
 */
export interface TableProjection {
  readonly table: string;
  readonly columns: readonly Column[];
  /** The column that identifies a row; `null` for append-only tables such as the event mirror. */
  readonly key: string | null;
  readonly handles: readonly EventType[] | 'all';
  /**
   * Keep every version of every row with the log positions it was true between (history.ts), for
   * `AS OF` queries. Keyed tables only.
   */
  readonly history?: boolean;
  /**
   * Its rows come with high-volume activity (calls, runs, messages), not with resources: an answer
   * read from other tables is kept while only such tables change (readVersions.ts). A table every
   * event changes (`handles: 'all'`) is one without saying so.
   */
  readonly activity?: boolean;
  apply(event: RecordedEvent, rows: RowStore, lookup: TableLookup): Promise<void> | void;
  /**
   * Called once a batch's events have all been applied, before its rows are written: for rows that
   * sum up the whole batch (the ledger's tree head), worth writing once rather than per event.
   */
  finish?(rows: RowStore, lookup: TableLookup): Promise<void> | void;
}

/**
 * One batch as a schema projection sees it, a new one for every batch applied (a batch rolled back
 * and applied again gets another): what a projection keeps to write at the batch's end is kept
 * under it, so nothing of a failed batch is carried into the next.
 */
export type BatchScope = object;

/** What a schema projection's `apply` gets besides the event: the writer, the log, the batch. */
export type SchemaApplyRest = [
  connection: DuckDBConnection,
  log: Pick<EventLog, 'readStream'>,
  batch: BatchScope,
];

/**
 * A projection that manages whole tables rather than rows (an uploaded file becomes a table of its
 * own). It runs inside the same DuckDB transaction as the row projections of its batch.
 */
export interface SchemaProjection {
  readonly name: string;
  /** Bumped when what `apply` builds changes, so existing tables are rebuilt. */
  readonly version: number;
  readonly handles: readonly EventType[];
  prepare(connection: DuckDBConnection): Promise<void>;
  /**
   * `log` answers what happened later on a stream (an uploaded file's bytes may be gone because a
   * later event deleted or replaced the file: its table would be dropped anyway).
   */
  apply(event: RecordedEvent, ...rest: SchemaApplyRest): Promise<void>;
  /** After the batch's last event (one it applied), in its transaction: writes what `apply` kept for `batch`. */
  finish?(connection: DuckDBConnection, batch: BatchScope): Promise<void>;
  drop(connection: DuckDBConnection): Promise<void>;
}

/** What the queries beside a table need: a parameterised read on a pooled connection. */
export type TableReader = Pick<Duck, 'query'>;
