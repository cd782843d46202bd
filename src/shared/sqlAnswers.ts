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
