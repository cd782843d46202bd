import type { Row } from './types';

/**
 * A deep copy of a stored row's cells (Dates, arrays, parsed JSON). Not `structuredClone`: it makes
 * its copies in the realm it belongs to, and a Date from another realm fails `instanceof Date`.
 */
const copy = (value: unknown): unknown => {
  if (value instanceof Date) return new Date(value.getTime());
  if (Array.isArray(value)) return value.map(copy);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copy(v)]));
  return value;
};

/** Known absent: the key's row was deleted by a committed batch. */
const ABSENT = null;

/**
 * The rows the runner's own committed batches wrote, per keyed table, most recently used kept: a
 * projection reading a row the previous batch wrote (the ledger's tree head, every batch; a resource
 * changed twice in a row) gets it without a query. Only the runner writes these tables, so a
 * remembered row is the table's row. It is held in the stored form a batch's pending rows have
 * (`storedCell`), which is also what a row read back from the table looks like, so a projection
 * sees the same values as from a larger batch that held both events (the rebuild property applies
 * any batch size). Each read gets its own copy: a projection changing a row it read must not change
 * what is remembered.
 */
export class CommittedRows {
  private readonly tables = new Map<string, Map<string, Row | typeof ABSENT>>();

  constructor(private readonly perTable = 4096) {}

  /** The remembered row (a copy), `null` when known deleted, `undefined` when not remembered. */
  get(table: string, key: string): Row | null | undefined {
    const rows = this.tables.get(table);
    if (!rows?.has(key)) return undefined;
    const row = rows.get(key)!;
    // Most recently used goes last; the first is evicted first.
    rows.delete(key);
    rows.set(key, row);
    return row === ABSENT ? null : (copy(row) as Row);
  }

  /** Whether the key's row (or its deletion) is remembered, without touching its place in the order. */
  knows(table: string, key: string): boolean {
    return this.tables.get(table)?.has(key) ?? false;
  }

  /** After a batch committed: its final row (or deletion) of every key it touched. */
  remember(table: string, changes: Iterable<[string, Row | null]>) {
    let rows = this.tables.get(table);
    if (!rows) this.tables.set(table, (rows = new Map()));
    for (const [key, row] of changes) {
      rows.delete(key);
      rows.set(key, row);
    }
    for (const key of rows.keys()) {
      if (rows.size <= this.perTable) break;
      rows.delete(key);
    }
  }

  /** Anything uncertain (a failed batch, tables dropped): forget all. */
  clear() {
    this.tables.clear();
  }
}
