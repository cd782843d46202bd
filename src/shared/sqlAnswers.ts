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
