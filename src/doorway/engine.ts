/**
 * What every SQL door (MySQL's, PostgreSQL's, HTTP's dialect layer) needs from the SQL engine: the
 * HTTP endpoint's `execute`, and optionally a streaming variant for large results. The doors import
 * nothing of src/sql; the composition root adapts the engine to this port.
 */
import type { ErrorAnswer, SqlContext, TableAnswer, TableRows } from '../shared/sqlAnswers';

export type { ErrorAnswer, SqlContext, TableAnswer } from '../shared/sqlAnswers';
type OkAnswer = { type: 'ok'; affected_rows?: number | null };
export type SqlAnswer = (TableAnswer | OkAnswer | ErrorAnswer) & { context: SqlContext };

/**
 * A table read as it is produced (`TableRows`), with its context. The server writes each chunk to the
 * client before it asks for the next (so a slow client slows the reading, and memory holds one
 * chunk), and stops asking when the client leaves or its row limit is reached (it then calls
 * `return()` on the iterator: the engine must release the query there).
 */
type TableStream = TableRows & { context: SqlContext };
export type StreamAnswer = TableStream | ((OkAnswer | ErrorAnswer) & { context: SqlContext });

/** An error a `rows` iterator throws mid-result carries the code the client is sent (1105 if none). */
export type EngineRowError = { error_code?: number; message?: string };

/** The connection a statement comes from: the user it authenticated as (any name with authentication off). */
export type ClientOf = { user: string; host: string; connectionId: number };

export interface SqlEngine {
  /** Runs one statement. `signal` aborts it (the client left, or KILL QUERY). Never throws for SQL errors. */
  execute(
    query: string,
    context: SqlContext,
    params: Record<string, unknown>,
    signal?: AbortSignal,
    client?: ClientOf,
  ): Promise<SqlAnswer>;
  /** When present, used for every statement the engine answers: large results never sit whole in memory. */
  stream?(
    query: string,
    context: SqlContext,
    params: Record<string, unknown>,
    signal?: AbortSignal,
    client?: ClientOf,
  ): Promise<StreamAnswer>;
}

/** The log calls the server makes (pino's Logger fits). */
export interface ServerLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}
