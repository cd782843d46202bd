/** The shapes of a SQL endpoint answer (MindsDB's `{type: table|ok|error, …}`). */
export type TableAnswer = {
  type: 'table';
  column_names: string[];
  column_types: string[];
  data: unknown[][];
  /** Present (true) when the answer was cut at the row limit. */
  truncated?: true;
};

/**
 * A table read as DuckDB produces it (the MySQL protocol's streaming port): the columns first, then
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

export type OkAnswer = { type: 'ok'; affected_rows: number | null };
export type ErrorAnswer = { type: 'error'; error_code: number; error_message: string };
/** What the client sends back as `context` (the database bare names and SHOW look in). */
export type SqlContext = { db?: string; [key: string]: unknown };
export type SqlAnswer = (TableAnswer | OkAnswer | ErrorAnswer) & { context: SqlContext };
export type StreamAnswer = (TableRows | OkAnswer | ErrorAnswer) & { context: SqlContext };
