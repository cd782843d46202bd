/** The shapes of a SQL endpoint answer (MindsDB's `{type: table|ok|error, …}`). */
export type TableAnswer = {
  type: 'table';
  column_names: string[];
  column_types: string[];
  data: unknown[][];
  /** Present (true) when the answer was cut at the row limit. */
  truncated?: true;
};

export type OkAnswer = { type: 'ok'; affected_rows: number | null };
export type ErrorAnswer = { type: 'error'; error_code: number; error_message: string };
/** What the client sends back as `context` (the database bare names and SHOW look in). */
export type SqlContext = { db?: string; [key: string]: unknown };
export type SqlAnswer = (TableAnswer | OkAnswer | ErrorAnswer) & { context: SqlContext };
