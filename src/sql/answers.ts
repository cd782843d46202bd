import type { ErrorAnswer, SqlContext, TableAnswer, TableRows } from '../shared/sqlAnswers';

/** The shapes of a SQL endpoint answer (MindsDB's `{type: table|ok|error, …}`). */
export type { ErrorAnswer, RowTable, SqlContext, TableAnswer, TableRows } from '../shared/sqlAnswers';

export type OkAnswer = { type: 'ok'; affected_rows: number | null };
export type SqlAnswer = (TableAnswer | OkAnswer | ErrorAnswer) & { context: SqlContext };
export type StreamAnswer = (TableRows | OkAnswer | ErrorAnswer) & { context: SqlContext };
