/**
 * The shapes of a SQL answer (MindsDB's `{type: table|error, …}`) that the SQL interface makes and
 * every door reads: one definition, since src/doorway may not import src/sql.
 */

/** What the client sends back as `context` (the database bare names and SHOW look in). */
export type SqlContext = { db?: string; [key: string]: unknown };

export type TableAnswer = {
  type: 'table';
  column_names: string[];
  /** DuckDB type names (`BIGINT`, `DECIMAL(10,2)`, `TIMESTAMP WITH TIME ZONE`, `INTEGER[]`, …). */
  column_types: string[];
  /**
   * JSON-ready cells, as the HTTP endpoint answers them (see docs/sql.md, "Values"); integer cells
   * may also be bigint, and a DECIMAL's exact text is welcome as a string.
   */
  data: unknown[][];
  /** Present (true) when the engine cut the answer at its row or size limit. */
  truncated?: true;
};

export type ErrorAnswer = { type: 'error'; error_code: number; error_message: string };

/** Every row a query read, uncut, as arrays beside its column names (a training's rows, for one). */
export type RowTable = { names: readonly string[]; rows: readonly (readonly unknown[])[] };

/**
 * A table read as DuckDB produces it (what the doors stream): the columns first, then
 * chunks of rows as the consumer asks for them; `truncated()` once they are done.
 */
export type TableRows = {
  type: 'table';
  column_names: string[];
  column_types: string[];
  rows: AsyncIterable<unknown[][]>;
  /** The rows `rows` yields as one chunk, when the answer was whole already (cached, pushed down). */
  whole?: unknown[][];
  truncated(): boolean;
};

/**
 * The one question every door asks of a table's columns: information_schema.COLUMNS (the one
 * listing, src/sql/catalog/catalogListing.ts), in order, for `database.table`; `listedColumns`
 * reads its answer. Shared by DESCRIBE (src/sql/catalog/introspection.ts) and the MySQL door's
 * SHOW COLUMNS (src/mysql/session/answers/tables.ts), so the two cannot drift.
 */
export const catalogColumnsQuery = (database: string, table: string, quote: (text: string) => string) =>
  `SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS
     WHERE lower(TABLE_SCHEMA) = ${quote(database.toLowerCase())} AND lower(TABLE_NAME) = ${quote(table.toLowerCase())}
     ORDER BY TABLE_NAME, ORDINAL_POSITION`;

/**
 * The columns `catalogColumnsQuery` answered for `table`, or undefined when it listed none. An
 * answer cut at SQL_ROW_LIMIT lists some columns only: undefined too, for `SELECT * … LIMIT 0` to
 * describe them all.
 */
export const listedColumns = (
  answer: Pick<TableAnswer, 'data' | 'truncated'>,
  table: string,
): { names: string[]; types: string[] } | undefined => {
  if (answer.data.length === 0 || answer.truncated) return undefined;
  // Of names differing only in case (an external database may hold "Users" and "users"), the one named.
  const exact = answer.data.filter((r) => r[0] === table);
  const first = answer.data[0]![0];
  const rows = exact.length > 0 ? exact : answer.data.filter((r) => r[0] === first);
  return { names: rows.map((r) => String(r[1])), types: rows.map((r) => String(r[2])) };
};
