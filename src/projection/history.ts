import type { Row, RowStore, TableLookup, TableProjection } from './types';
import { storedRow, type BatchRowStore } from './rows';

/**
 * Row history for `AS OF` (time travel): for a table whose projection asks for it (`history: true`),
 * every version of every row is kept with the log positions between which it was true. Two tables
 * beside the live one, written by the batch as the live one is, so a rebuild holds the same history
 * row for row:
 * - `<table>_versions`: the current version of each live row, keyed as the table, with VALID_FROM
 *   (the position of the event that made it);
 * - `<table>_history`: every earlier version, and the last one of a deleted row, with VALID_FROM and
 *   VALID_TO (the position of the event that replaced or deleted it).
 * The row of key k as of position p is the version with VALID_FROM <= p < VALID_TO (VALID_TO of a
 * current version: none).
 */
const VALID_FROM = 'VALID_FROM';
const VALID_TO = 'VALID_TO';

export const versionsTableOf = (table: string) => `${table}_versions`;
export const historyTableOf = (table: string) => `${table}_history`;

/** The two tables of a projection's history: written by `HistoryRecorder`, never by events directly. */
const historyProjections = (p: TableProjection): TableProjection[] => [
  {
    table: versionsTableOf(p.table),
    columns: [...p.columns, { name: VALID_FROM, type: 'BIGINT' }],
    key: p.key,
    handles: [],
    apply: () => undefined,
  },
  {
    table: historyTableOf(p.table),
    columns: [...p.columns, { name: VALID_FROM, type: 'BIGINT' }, { name: VALID_TO, type: 'BIGINT' }],
    key: null,
    handles: [],
    apply: () => undefined,
  },
];

/** The projections with the history tables of those that keep history. */
export const withHistoryTables = (projections: readonly TableProjection[]): TableProjection[] => [
  ...projections,
  ...projections.filter((p) => p.history).flatMap(historyProjections),
];

type Change = { key: string; row: Row | null; position: bigint; fresh: boolean };

/**
 * A projection's row store that notes each change with the position of the event being applied,
 * and, once the batch's events are applied, turns the changes into versions (`record`).
 */
export class HistoryRecorder implements RowStore {
  private readonly changes: Change[] = [];

  constructor(
    private readonly projection: TableProjection & { key: string },
    private readonly live: BatchRowStore,
    private readonly position: () => bigint,
  ) {}

  get table() {
    return this.projection.table;
  }

  get(key: string | bigint) {
    return this.live.get(key);
  }

  scan(where: Row, filter?: (row: Row) => boolean) {
    return this.live.scan(where, filter);
  }

  private note(row: Row | null, key: string, fresh: boolean) {
    this.changes.push({ key, row, position: this.position(), fresh });
  }

  put(row: Row): void {
    this.live.put(row);
    const stored = storedRow(this.projection, row);
    this.note(stored, String(stored[this.projection.key]), false);
  }

  insert(row: Row): void {
    this.live.insert(row);
    const stored = storedRow(this.projection, row);
    this.note(stored, String(stored[this.projection.key]), true);
  }

  delete(key: string | bigint): void {
    this.live.delete(key);
    this.note(null, String(key), false);
  }

  /** Writes the batch's versions (before the stores are flushed). */
  async record(lookup: TableLookup): Promise<void> {
    if (this.changes.length === 0) return;
    const versions = lookup(versionsTableOf(this.projection.table));
    const history = lookup(historyTableOf(this.projection.table));
    // A key first seen by `insert` (a fresh id) has no earlier version: no look-up for it. The
    // others' versions are read at once.
    await versions.prefetch?.(this.changes.filter((c) => !c.fresh).map((c) => c.key));
    const inserted = new Set<string>();
    for (const change of this.changes) {
      const earlier = change.fresh && !inserted.has(change.key) ? undefined : await versions.get(change.key);
      if (change.fresh) inserted.add(change.key);
      const from = earlier?.[VALID_FROM];
      if (earlier && from !== change.position)
        history.put({ ...earlier, [VALID_FROM]: from, [VALID_TO]: change.position });
      // A version replaced by the same event never held between two positions: it leaves no trace.
      if (change.row) {
        const version = { ...change.row, [VALID_FROM]: change.position };
        if (change.fresh && !earlier) versions.insert(version);
        else versions.put(version);
      } else if (earlier) versions.delete(change.key);
    }
    this.changes.length = 0;
  }
}

/**
 * The tables whose projections keep history (`history: true`): what `AS OF` can read. Checked
 * against the projections by a spec (as-of.spec.ts).
 */
export const HISTORY_TABLES: ReadonlySet<string> = new Set([
  'projects',
  'databases',
  'skills',
  'agents',
  'chatbots',
  'models',
  'knowledge_bases',
  'ml_engines',
  'views',
  'jobs',
]);

/** A history-keeping table's rows as of a log position: the version of each row true then. */
export const rowsAsOf = (table: string, position: bigint) =>
  `SELECT * EXCLUDE (${VALID_FROM}) FROM main.${versionsTableOf(table)} WHERE ${VALID_FROM} <= ${position}
   UNION ALL BY NAME
   SELECT * EXCLUDE (${VALID_FROM}, ${VALID_TO}) FROM main.${historyTableOf(table)}
   WHERE ${VALID_FROM} <= ${position} AND ${VALID_TO} > ${position}`;

/** Words that may follow a table in FROM/JOIN and are not its alias. */
const NOT_AN_ALIAS = new Set([
  'WHERE',
  'ORDER',
  'LIMIT',
  'GROUP',
  'HAVING',
  'JOIN',
  'LEFT',
  'RIGHT',
  'INNER',
  'FULL',
  'CROSS',
  'ON',
  'USING',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'OFFSET',
  'QUALIFY',
  'WINDOW',
  'AS',
  'NATURAL',
  'POSITIONAL',
  'ASOF',
  'ANTI',
  'SEMI',
]);

/**
 * A read-model query made to read the history-keeping tables as of a log position: each
 * `FROM t` / `JOIN t` (bare, quoted or `main.`) of such a table reads `rowsAsOf` instead, under
 * the table's name. What a service reads one resource with thus answers about that moment.
 */
export const readingAsOf = (sql: string, position: bigint): string =>
  sql.replace(
    /\b(FROM|JOIN)(\s+)(?:main\.)?("?)([a-z_]+)\3(?![\w."])(?=(\s+[A-Za-z_]+)?)/g,
    (whole, keyword: string, blank: string, _q: string, table: string, next: string | undefined) => {
      if (!HISTORY_TABLES.has(table)) return whole;
      const aliased = next !== undefined && !NOT_AN_ALIAS.has(next.trim().toUpperCase());
      return `${keyword}${blank}(${rowsAsOf(table, position)})${aliased ? '' : ` AS "${table}"`}`;
    },
  );
