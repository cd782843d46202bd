import type { ErrorAnswer, SqlContext, TableAnswer } from '../shared/sqlAnswers';

/** The shapes of a SQL endpoint answer (MindsDB's `{type: table|ok|error, …}`). */
export type { ErrorAnswer, SqlContext, TableAnswer } from '../shared/sqlAnswers';

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
export type SqlAnswer = (TableAnswer | OkAnswer | ErrorAnswer) & { context: SqlContext };
export type StreamAnswer = (TableRows | OkAnswer | ErrorAnswer) & { context: SqlContext };
