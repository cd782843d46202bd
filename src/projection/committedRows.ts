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
  /**
   * Tables whose every row is remembered (read whole, `rememberWhole`, and none evicted since): a key
   * they do not hold has no row, and a scan is answered without a query.
   */
  private readonly whole = new Set<string>();
  /** Tables found too large to read whole: not tried again until `clear`. */
  private readonly tooLarge = new Set<string>();

  constructor(readonly perTable = 4096) {}

  /** The remembered row (a copy), `null` when known deleted or absent, `undefined` when not remembered. */
  get(table: string, key: string): Row | null | undefined {
    const rows = this.tables.get(table);
    if (!rows?.has(key)) return this.whole.has(table) ? null : undefined;
    const row = rows.get(key)!;
    // Most recently used goes last; the first is evicted first.
    rows.delete(key);
    rows.set(key, row);
    return row === ABSENT ? null : (copy(row) as Row);
  }

  /** Whether the key's row (or its deletion) is remembered, without touching its place in the order. */
  knows(table: string, key: string): boolean {
    return this.whole.has(table) || (this.tables.get(table)?.has(key) ?? false);
  }

  /** Whether every row of the table is remembered. */
  holdsWhole(table: string): boolean {
    return this.whole.has(table);
  }

  /** Whether reading the table whole is worth a try (it was not found too large since `clear`). */
  mayReadWhole(table: string): boolean {
    return !this.whole.has(table) && !this.tooLarge.has(table);
  }

  /**
   * The table's every row, as a query read it at the batch's start (the runner's committed rows):
   * remembered whole when there are at most `perTable` of them. Whether they were.
   */
  rememberWhole(table: string, rows: readonly (readonly [string, Row])[]): boolean {
    if (rows.length > this.perTable) {
      this.tooLarge.add(table);
      return false;
    }
    this.tables.set(table, new Map(rows));
    this.whole.add(table);
    return true;
  }

  /** Copies of the remembered rows `test` accepts, with their keys (only meaningful when `holdsWhole`). */
  matching(table: string, test: (row: Row) => boolean): [string, Row][] {
    const found: [string, Row][] = [];
    for (const [key, row] of this.tables.get(table) ?? [])
      if (row !== ABSENT && test(row)) found.push([key, copy(row) as Row]);
    return found;
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
      this.whole.delete(table);
    }
  }

  /** Anything uncertain (a failed batch, tables dropped): forget all. */
  clear() {
    this.tables.clear();
    this.whole.clear();
    this.tooLarge.clear();
  }
}
