import type { SqlAnswer } from '../../doorway/engine';
import type { ConnectionExpression } from './statement';
import type { SessionVariables, VariableValue } from './variables';

export type Diagnostic = { level: 'Warning' | 'Error' | 'Note'; code: number; message: string };

export type ProcessRow = {
  id: number;
  user: string;
  host: string;
  db: string | null;
  command: string;
  seconds: number;
  info: string | null;
};

/** What a session may ask of the server: the other connections (SHOW PROCESSLIST, KILL). */
export interface ServerView {
  processes(): ProcessRow[];
  kill(id: number, scope: 'query' | 'connection'): boolean;
}

/**
 * What the statements a connection answers itself read and change of their session (the Session
 * class is one): the engine for data, the database in use, variables, the last statement's
 * diagnostics, the server.
 */
export interface SessionView {
  /** Runs one look-up through the engine (SHOW COLUMNS' `SELECT * … LIMIT 0`), connection values written in. */
  query(sql: string, signal?: AbortSignal): Promise<SqlAnswer>;
  /** The database bare names resolve in. */
  database(): string;
  /** A value of the connection (`@@x`, DATABASE(), USER() …); undefined for an unknown variable. */
  valueOf(e: ConnectionExpression): { value: VariableValue } | undefined;
  readonly variables: SessionVariables;
  readonly userVariables: Map<string, VariableValue>;
  readonly diagnostics: readonly Diagnostic[];
  readonly server: ServerView;
}
