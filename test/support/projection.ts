import type { MindledgerEvent } from '../../events';
import { allProjections } from '../../projections';
import { cellsMatcher, storedRow } from '../../src/projection/rows';
import type { Column, Row, RowStore, TableProjection } from '../../src/projection/types';
import { recorded } from './decider';

/** A table keyed by its column ID that no event feeds: what a row store's own specs write and read. */
export const keyedTable = (table: string, columns: readonly Column[]): TableProjection => ({
  table,
  key: 'ID',
  columns: [...columns],
  handles: [],
  apply: () => undefined,
});

/** One table's rows in memory, in the form DuckDB gives them back (so specs see what readers see). */
class MemoryRows implements RowStore {
  readonly rows = new Map<string, Row>();
  private appended = 0;
  constructor(private readonly projection: TableProjection) {}
  async get(key: string | bigint) {
    return this.rows.get(String(key));
  }
  put(row: Row) {
    const stored = storedRow(this.projection, row);
    const key = this.projection.key ? String(stored[this.projection.key]) : String(this.appended++);
    this.rows.set(key, stored);
  }
  /** A fresh key must be fresh: inserting over a row that exists is a projection bug. */
  insert(row: Row) {
    const stored = storedRow(this.projection, row);
    if (this.projection.key && this.rows.has(String(stored[this.projection.key])))
      throw new Error(
        `${this.projection.table}: insert over the existing row ${String(stored[this.projection.key])}`,
      );
    this.put(row);
  }
  delete(key: string | bigint) {
    this.rows.delete(String(key));
  }
  async scan(where: Row, filter: (row: Row) => boolean = () => true) {
    const matches = cellsMatcher(this.projection, where);
    return [...this.rows.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, row]) => row)
      .filter((row) => matches(row) && filter(row));
  }
}

/**
 * Given events (positions 1, 2, … as the log would give them) → the rows of every projection
 * table, applied in the runner's order: a projection spec reads "given these events, the table
 * holds these rows", with no database and no service in between.
 */
export const projected = async (events: readonly MindledgerEvent[], projections = allProjections) => {
  const stores = new Map(projections.map((p) => [p.table, new MemoryRows(p)]));
  const lookup = (table: string) => {
    const store = stores.get(table);
    if (!store) throw new Error(`No projection writes table ${table}`);
    return store;
  };
  for (const event of recorded(events))
    for (const p of projections)
      if (p.handles === 'all' || p.handles.includes(event.type))
        await p.apply(event, lookup(p.table), lookup);
  return (table: string) => [...lookup(table).rows.values()];
};
