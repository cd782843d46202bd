import {
  BIGINT,
  LIST,
  VARCHAR,
  DuckDBTimestampValue,
  type DuckDBAppender,
  type DuckDBConnection,
} from '@duckdb/node-api';
import type { Column, Row, RowStore, TableProjection, TableReader } from './types';
import { quoteIdent } from '../shared/quoting';
import type { CommittedRows } from './committedRows';
import { cellLiteral, JsonText, rowLiteral } from './sqlLiterals';
import { selectRow, type RowOf } from './table';

/** Above this many rows a table's batch goes through the appender (replays), below as SQL text. */
const LITERAL_ROWS_MAX = 64;

export const createTableSql = (p: TableProjection) =>
  `CREATE TABLE IF NOT EXISTS ${quoteIdent(p.table)} (${p.columns
    .map((c) => `${quoteIdent(c.name)} ${c.type}`)
    .join(', ')})`;

/** A Date's or a date text's milliseconds since the epoch (a whole number), null when unreadable. */
const epochMs = (value: unknown): number | null => {
  const ms = value instanceof Date ? value.getTime() : Date.parse(String(value));
  return Number.isFinite(ms) ? ms : null;
};

const toMicros = (value: unknown): bigint | null => {
  const ms = epochMs(value);
  return ms === null ? null : BigInt(ms) * 1000n;
};

const appendCell = (appender: DuckDBAppender, column: Column, value: unknown) => {
  if (value === null || value === undefined) return appender.appendNull();
  switch (column.type) {
    case 'VARCHAR':
      return appender.appendVarchar(String(value));
    case 'JSON':
      return appender.appendVarchar(
        value instanceof JsonText ? value.text : typeof value === 'string' ? value : JSON.stringify(value),
      );
    case 'BIGINT':
      return appender.appendBigInt(BigInt(value as bigint | number | string));
    case 'INTEGER':
      return appender.appendInteger(Number(value));
    case 'DOUBLE':
      return appender.appendDouble(Number(value));
    case 'BOOLEAN':
      return appender.appendBoolean(Boolean(value));
    case 'TIMESTAMP': {
      // Contracts validate timestamps; should one ever be unreadable, the cell is null, not a stuck batch.
      const micros = toMicros(value);
      return micros === null
        ? appender.appendNull()
        : appender.appendTimestamp(new DuckDBTimestampValue(micros));
    }
    case 'VARCHAR[]':
      return appender.appendList((value as unknown[]).map(String), LIST(VARCHAR));
    case 'BIGINT[]':
      return appender.appendList(
        (value as unknown[]).map((v) => BigInt(v as bigint | number)),
        LIST(BIGINT),
      );
    default: {
      const _exhaustive: never = column.type;
      return _exhaustive;
    }
  }
};

/**
 * A cell as the table gives it back (`getRowObjectsJS`, JSON parsed): BIGINT as bigint, TIMESTAMP as
 * a Date of millisecond precision, JSON as the parsed value. Rows written in a batch are held in this
 * form too, so a projection comparing cells sees the same values whether the row it reads is pending
 * in the batch or already stored: otherwise a rebuild, which applies many events per batch, decides
 * differently from the live process, which applied them one or two at a time.
 */
const storedCell = (column: Column, value: unknown): unknown => {
  if (value === null || value === undefined) return null;
  switch (column.type) {
    case 'VARCHAR':
      return String(value);
    case 'JSON':
      return JSON.parse(typeof value === 'string' ? value : JSON.stringify(value)) as unknown;
    case 'BIGINT':
      return BigInt(value as bigint | number | string);
    case 'INTEGER':
    case 'DOUBLE':
      return Number(value);
    case 'BOOLEAN':
      return Boolean(value);
    case 'TIMESTAMP': {
      const ms = epochMs(value);
      return ms === null ? null : new Date(ms);
    }
    case 'VARCHAR[]':
      return (value as unknown[]).map(String);
    case 'BIGINT[]':
      return (value as unknown[]).map((v) => BigInt(v as bigint | number));
    default: {
      const _exhaustive: never = column.type;
      return _exhaustive;
    }
  }
};

/** Every column of the projection, each cell in its stored form; unknown keys are dropped. */
export const storedRow = (projection: TableProjection, row: Row): Row => {
  const out: Row = {};
  for (const c of projection.columns) out[c.name] = storedCell(c, row[c.name]);
  return out;
};

/**
 * A row only written, never read back (a keyless table's: `get` and `scan` see none of its pending
 * rows): as `storedRow`, except that a JSON object or array is kept as the text the appender (or
 * the literal) writes, `JSON.stringify` of the value, not parsed from it to be stringified again on
 * flush. Stringifying the parse of a stringified object gives the same text, so the table holds
 * the same cells. Other JSON values (text, scalars, what a toJSON turns into one) go as `storedRow`.
 */
const writtenRow = (projection: TableProjection, row: Row): Row => {
  const out: Row = {};
  for (const c of projection.columns) {
    const value = row[c.name];
    if (c.type === 'JSON' && value !== null && typeof value === 'object') {
      const text = JSON.stringify(value) as string | undefined;
      const first = text?.charCodeAt(0);
      if (text !== undefined && (first === 0x7b || first === 0x5b)) {
        out[c.name] = new JsonText(text);
        continue;
      }
    }
    out[c.name] = storedCell(c, value);
  }
  return out;
};

const isList = (column: Column) => column.type === 'VARCHAR[]' || column.type === 'BIGINT[]';

const whereColumn = (projection: TableProjection, name: string): Column => {
  const column = projection.columns.find((c) => c.name === name);
  if (!column) throw new Error(`${projection.table} has no column ${name} to scan by`);
  return column;
};

/** One cell of `where` as a bound value: a list column's value is one element of the list. */
const whereValue = (column: Column, value: unknown): bigint | string | number | boolean => {
  const stored = isList(column) ? storedCell(column, [value]) : storedCell(column, value);
  const cell = isList(column) ? (stored as unknown[])[0] : stored;
  if (typeof cell === 'object') throw new Error(`A scan cannot match ${column.name} (${column.type})`);
  return cell as bigint | string | number | boolean;
};

/**
 * `where` as the SQL condition the table reads: each cell equal (null: IS NULL; a list column: holds
 * the value). Bound values, no text built from cells.
 */
const whereCells = (projection: TableProjection, where: Row) => {
  const terms: string[] = ['TRUE'];
  const values: (bigint | string | number | boolean)[] = [];
  for (const [name, value] of Object.entries(where)) {
    const column = whereColumn(projection, name);
    if (value === null || value === undefined) {
      terms.push(`${quoteIdent(name)} IS NULL`);
      continue;
    }
    terms.push(isList(column) ? `list_contains(${quoteIdent(name)}, ?)` : `${quoteIdent(name)} = ?`);
    values.push(whereValue(column, value));
  }
  return { sql: terms.join(' AND '), values };
};

/** `where` as a test of a row in its stored form, matching what `whereCells` makes the table match. */
export const cellsMatcher = (projection: TableProjection, where: Row) => {
  const tests = Object.entries(where).map(([name, value]) => {
    const column = whereColumn(projection, name);
    if (value === null || value === undefined)
      return (row: Row) => row[name] === null || row[name] === undefined;
    const wanted = whereValue(column, value);
    return isList(column)
      ? (row: Row) => Array.isArray(row[name]) && (row[name] as unknown[]).some((item) => item === wanted)
      : (row: Row) => row[name] === wanted;
  });
  return (row: Row) => tests.every((test) => test(row));
};

/** Keys one `prefetch` query reads at most. */
const PREFETCH_KEYS = 1000;

/**
 * A projection's pending changes for one batch. Keyed tables: the last write per key wins, and on
 * flush the touched keys are deleted and the surviving rows appended; this replaces thousands of
 * keyed single-row upserts (slow in DuckDB) with one DELETE and one appender per table.
 */
export class BatchRowStore implements RowStore {
  private readonly pending = new Map<string, Row | null>();
  private readonly appended: Row[] = [];
  /** Pending keys the table cannot hold yet (inserted in this batch): flushing deletes none of them. */
  private readonly fresh = new Set<string>();
  /** Keys the table held a row for when the batch began (read from it, or remembered). */
  private readonly held = new Set<string>();
  /** Rows `prefetch` read from the table for this batch, each answered once (undefined: none). */
  protected readonly readAhead = new Map<string, Row | undefined>();

  constructor(
    private readonly projection: TableProjection,
    private readonly connection: DuckDBConnection,
    private readonly committed?: CommittedRows,
  ) {}

  async get(key: string | bigint): Promise<Row | undefined> {
    const k = String(key);
    if (this.pending.has(k)) return this.pending.get(k) ?? undefined;
    if (!this.projection.key) return undefined;
    const remembered = this.committed?.get(this.projection.table, k);
    const row =
      remembered !== undefined
        ? (remembered ?? undefined)
        : await this.readAheadOr(k, () => this.readStored(key));
    if (row) this.held.add(k);
    return row;
  }

  /** The row `prefetch` read for `k` (given once: a projection may change what it got), else `read`'s. */
  private readAheadOr(k: string, read: () => Promise<Row | undefined>) {
    if (!this.readAhead.has(k)) return read();
    const row = this.readAhead.get(k);
    this.readAhead.delete(k);
    return Promise.resolve(row);
  }

  /**
   * Reads the rows of these keys that neither this batch nor the committed rows know, a thousand
   * keys a query: a batch's history (history.ts) looks up every changed key's current version, and
   * one query per key made a replay of many deleted resources 14 times slower (2,100 events/s
   * against 30,000 with the same events on few keys).
   */
  async prefetch(keys: readonly string[]): Promise<void> {
    const key = this.projection.key;
    if (!key) return;
    const table = this.projection.table;
    const wanted = [...new Set(keys)].filter(
      (k) => !this.pending.has(k) && !this.readAhead.has(k) && !this.committed?.knows(table, k),
    );
    for (let i = 0; i < wanted.length; i += PREFETCH_KEYS) {
      const chunk = wanted.slice(i, i + PREFETCH_KEYS);
      const reader = await this.connection.runAndReadAll(
        `SELECT * FROM ${quoteIdent(table)} WHERE ${quoteIdent(key)} IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
      );
      const found = new Map(
        (reader.getRowObjectsJS() as Row[]).map((row) => [String(row[key]), this.fromStored(row)]),
      );
      for (const k of chunk) this.readAhead.set(k, found.get(k));
    }
  }

  /** The table's row under `key`, as projections see it (JSON parsed), read with a query. */
  private async readStored(key: string | bigint): Promise<Row | undefined> {
    const reader = await this.connection.runAndReadAll(
      `SELECT * FROM ${quoteIdent(this.projection.table)} WHERE ${quoteIdent(this.projection.key!)} = ?`,
      [typeof key === 'bigint' ? key : String(key)],
    );
    const row = reader.getRowObjectsJS()[0] as Row | undefined;
    return row ? this.fromStored(row) : undefined;
  }

  put(row: Row): void {
    const key = this.projection.key;
    if (!key) {
      this.appended.push(writtenRow(this.projection, row));
      return;
    }
    const stored = storedRow(this.projection, row);
    this.pending.set(String(stored[key]), stored);
  }

  insert(row: Row): void {
    const key = this.projection.key;
    if (!key) return this.put(row);
    // The row in its stored form once (it was made twice per insert: once for its key).
    const stored = storedRow(this.projection, row);
    const k = String(stored[key]);
    // A key this batch already wrote or deleted may be in the table: it keeps its DELETE.
    const seen = this.pending.has(k);
    this.pending.set(k, stored);
    if (!seen) this.fresh.add(k);
  }

  delete(key: string | bigint): void {
    const k = String(key);
    if (this.fresh.delete(k)) this.pending.delete(k);
    else this.pending.set(k, null);
  }

  async scan(where: Row, filter: (row: Row) => boolean = () => true): Promise<Row[]> {
    const p = this.projection;
    const matches = cellsMatcher(p, where);
    const rows = new Map<string, Row>();
    if (await this.holdsWhole()) {
      for (const [k, row] of this.committed!.matching(p.table, matches)) rows.set(k, row);
    } else {
      const condition = whereCells(p, where);
      const reader = await this.connection.runAndReadAll(
        `SELECT * FROM ${quoteIdent(p.table)} WHERE ${condition.sql}`,
        condition.values,
      );
      for (const stored of reader.getRowObjectsJS() as Row[]) {
        const row = this.fromStored(stored);
        rows.set(p.key ? String(row[p.key]) : String(rows.size), row);
      }
    }
    for (const [k, row] of this.pending) {
      if (row && matches(row)) rows.set(k, row);
      else rows.delete(k);
    }
    // In key order, whatever the storage order or whether a row is pending: a projection that takes
    // "the first" match then decides the same on a rebuild as it did live.
    const keys = [...rows.keys()].sort();
    return keys.map((k) => rows.get(k)!).filter(filter);
  }

  /**
   * Whether the committed rows hold this keyed table whole, read whole with one query the first
   * time it is scanned when it is small enough (`CommittedRows.perTable`). A scan is then answered
   * from memory: a replay scanned models by project, agents by skill, chatbots by agent once per
   * such event (6,900 queries in a 100,000-event replay of the bench's mix, a third of its time).
   */
  private async holdsWhole(): Promise<boolean> {
    const { committed, projection: p } = this;
    if (!committed || !p.key) return false;
    if (committed.holdsWhole(p.table)) return true;
    if (!committed.mayReadWhole(p.table)) return false;
    const reader = await this.connection.runAndReadAll(
      `SELECT * FROM ${quoteIdent(p.table)} LIMIT ${committed.perTable + 1}`,
    );
    const rows = (reader.getRowObjectsJS() as Row[]).map(
      (stored) => [String(stored[p.key!]), this.fromStored(stored)] as const,
    );
    return committed.rememberWhole(p.table, rows);
  }

  /** JSON columns come back as strings; projections work with parsed values. */
  private fromStored(row: Row): Row {
    const out: Row = { ...row };
    for (const c of this.projection.columns) {
      if (c.type === 'JSON' && typeof out[c.name] === 'string')
        out[c.name] = JSON.parse(out[c.name] as string);
    }
    return out;
  }

  private async deleteTouchedKeys(key: string) {
    const p = this.projection;
    const keyColumn = p.columns.find((c) => c.name === key)!;
    const keys = [...this.pending.keys()].filter((k) => !this.fresh.has(k));
    if (keys.length === 0) return;
    const asValue = (k: string) => (keyColumn.type === 'BIGINT' ? BigInt(k) : k);
    if (keys.length <= 32) {
      // The common case (a request's own events): one statement.
      await this.connection.run(
        `DELETE FROM ${quoteIdent(p.table)} WHERE ${quoteIdent(key)} IN (${keys.map(() => '?').join(',')})`,
        keys.map(asValue),
      );
      return;
    }
    // Replays: touched keys go through a temporary table, since one set-based DELETE is an order of
    // magnitude faster in DuckDB than long IN-lists of bound parameters.
    const keysTable = `_keys_${p.table}`;
    await this.connection.run(`CREATE TEMP TABLE IF NOT EXISTS ${keysTable} (k ${keyColumn.type})`);
    const appender = await this.connection.createAppender(keysTable);
    try {
      for (const k of keys) {
        appendCell(appender, { name: 'k', type: keyColumn.type }, k);
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    await this.connection.run(
      `DELETE FROM ${quoteIdent(p.table)} WHERE ${quoteIdent(key)} IN (SELECT k FROM ${keysTable})`,
    );
    await this.connection.run(`DELETE FROM ${keysTable}`);
  }

  /**
   * The batch's changes as SQL text (a DELETE of the touched keys, one INSERT of the rows), to run
   * with the rest of the batch in one call; `undefined` when the appender must write them (many
   * rows, or a cell only the appender stores exactly). `[]`: nothing to write.
   */
  flushText(): string[] | undefined {
    const inPlace = this.updateInPlace();
    if (inPlace !== null) return inPlace;
    const p = this.projection;
    const rows = this.rowsToWrite();
    if (rows.length > LITERAL_ROWS_MAX) return undefined;
    const statements: string[] = [];
    if (p.key && this.pending.size > 0) {
      const key = p.key;
      const column = p.columns.find((c) => c.name === key)!;
      const keys = [...this.pending.keys()].filter((k) => !this.fresh.has(k));
      if (keys.length > LITERAL_ROWS_MAX) return undefined;
      if (keys.length > 0) {
        const literals = keys.map((k) => cellLiteral(column, column.type === 'BIGINT' ? BigInt(k) : k));
        if (literals.some((l) => l === undefined)) return undefined;
        statements.push(
          `DELETE FROM ${quoteIdent(p.table)} WHERE ${quoteIdent(key)} IN (${literals.join(', ')})`,
        );
      }
    }
    if (rows.length > 0) {
      const values = rows.map((r) => rowLiteral(p.columns, r));
      if (values.some((v) => v === undefined)) return undefined;
      statements.push(`INSERT INTO ${quoteIdent(p.table)} VALUES ${values.join(', ')}`);
    }
    return statements;
  }

  /**
   * The batch changed one row the table holds and nothing else (the ledger's tree head, every
   * batch; a resource updated): one UPDATE, cheaper in DuckDB than a DELETE and an INSERT. Null
   * when the batch is not that; `undefined` when a cell needs the appender.
   */
  private updateInPlace(): string[] | undefined | null {
    const p = this.projection;
    if (!p.key || this.appended.length > 0 || this.pending.size !== 1) return null;
    const [k, row] = [...this.pending][0]!;
    if (!row || !this.held.has(k)) return null;
    const key = p.columns.find((c) => c.name === p.key)!;
    const assignments: string[] = [];
    for (const c of p.columns) {
      if (c.name === p.key) continue;
      const literal = cellLiteral(c, row[c.name]);
      if (literal === undefined) return undefined;
      assignments.push(`${quoteIdent(c.name)} = ${literal}`);
    }
    const keyLiteral = cellLiteral(key, row[key.name]);
    if (keyLiteral === undefined) return undefined;
    return [
      `UPDATE ${quoteIdent(p.table)} SET ${assignments.join(', ')} WHERE ${quoteIdent(key.name)} = ${keyLiteral}`,
    ];
  }

  get table(): string {
    return this.projection.table;
  }

  /** Whether the batch changes this table at all. */
  get changed(): boolean {
    return this.pending.size > 0 || this.appended.length > 0;
  }

  /** Once the batch committed: what it wrote is what the table holds, for the next batches' reads. */
  rememberCommitted(): void {
    if (this.committed && this.projection.key && this.pending.size > 0)
      this.committed.remember(this.projection.table, this.pending);
  }

  private rowsToWrite(): Row[] {
    return [...this.appended, ...[...this.pending.values()].filter((r): r is Row => r !== null)];
  }

  async flush(): Promise<void> {
    const p = this.projection;
    if (p.key && this.pending.size > 0) await this.deleteTouchedKeys(p.key);
    const rows = this.rowsToWrite();
    if (rows.length === 0) return;
    const appender = await this.connection.createAppender(p.table);
    try {
      for (const row of rows) {
        for (const column of p.columns) appendCell(appender, column, row[column.name]);
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }
}

/**
 * The row of a project's resource a client names by id or by name (MindsDB accepts both; an id wins
 * over a name that happens to be all digits), read alone: answering about one resource never scans
 * or presents the project's others.
 */
export const rowOfProjectByRef = async <C extends readonly Column[]>(
  reader: TableReader,
  projection: { readonly table: string; readonly columns: C },
  projectId: number | bigint,
  ref: string,
): Promise<RowOf<C> | undefined> => {
  const table = quoteIdent(projection.table);
  const project = BigInt(projectId);
  // Two plain queries: one OR across both columns with an ORDER BY cost three times as much.
  if (/^\d+$/.test(ref)) {
    const byId = await selectRow(
      projection,
      reader,
      `SELECT * FROM ${table} WHERE ID = ? AND PROJECT_ID = ?`,
      [BigInt(ref), project],
    );
    if (byId) return byId;
  }
  return selectRow(
    projection,
    reader,
    `SELECT * FROM ${table} WHERE PROJECT_ID = ? AND lower(NAME) = ? LIMIT 1`,
    [project, ref.toLowerCase()],
  );
};
