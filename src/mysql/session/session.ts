import type { Outcome } from '../outcome';
import { fail, fromAnswer, MysqlError } from '../outcome';
import type { ClientOf, SqlContext, SqlEngine, SqlAnswer } from '../../doorway/engine';
import { answerLocally } from './answers/answerLocally';
import { classify } from './classify';
import { writeInMysqlOnlyTables } from './mysqlOnlyTables';
import type { ConnectionExpression, ConnectionFunction } from './statement';
import { substituteConnectionValues } from './substitute';
import { SessionVariables, serverVariables, type ServerFacts, type VariableValue } from './variables';
import type { Diagnostic, ServerView, SessionView } from './view';

type SessionOptions = {
  engine: SqlEngine;
  facts: ServerFacts;
  server: ServerView;
  /** The database bare names resolve in while none is chosen (the engine's default). */
  defaultDatabase: string;
};

/** Why a statement's signal was aborted, and what the client is told then (code 1317, as the engine's). */
export const Interruption = {
  killed: 'Query execution was interrupted',
  shutdown: 'The server is shutting down; the query was interrupted',
  clientGone: 'The client went away; the query was interrupted',
} as const;
export type InterruptionReason = keyof typeof Interruption;
export const isInterruption = (reason: unknown): reason is InterruptionReason =>
  typeof reason === 'string' && reason in Interruption;

/**
 * One connection's SQL state: the database in use (the engine's context), system and user
 * variables, the last statement's warnings. Runs a statement: the ones MySQL answers from the
 * connection itself here, the rest through the engine with the connection's values written in.
 */
export class Session implements SessionView {
  readonly variables: SessionVariables;
  readonly userVariables = new Map<string, VariableValue>();
  context: SqlContext = {};
  diagnostics: Diagnostic[] = [];

  constructor(
    readonly id: number,
    readonly user: string,
    readonly host: string,
    readonly options: SessionOptions,
  ) {
    this.variables = new SessionVariables(serverVariables(options.facts), () => ({
      warning_count: this.diagnostics.filter((d) => d.level !== 'Error').length,
      error_count: this.diagnostics.filter((d) => d.level === 'Error').length,
      pseudo_thread_id: this.id,
      last_insert_id: 0,
      identity: 0,
      database: this.database(),
    }));
  }

  get engine() {
    return this.options.engine;
  }

  /** Who sends this connection's statements (the engine checks the user's role). */
  get client(): ClientOf {
    return { user: this.user, host: this.host, connectionId: this.id };
  }

  get server(): ServerView {
    return this.options.server;
  }

  /** The database bare names resolve in. */
  database(): string {
    return typeof this.context.db === 'string' && this.context.db
      ? this.context.db
      : this.options.defaultDatabase;
  }

  /** A value of the connection (`@@x`, DATABASE(), USER() …); undefined for an unknown variable. */
  valueOf(e: ConnectionExpression): { value: VariableValue } | undefined {
    switch (e.kind) {
      case 'literal':
        return { value: e.value };
      case 'variable': {
        const v = this.variables.get(e.name);
        return v.found ? { value: v.value } : undefined;
      }
      case 'function':
        return { value: this.functionValue(e.name) };
      default: {
        const _exhaustive: never = e;
        return _exhaustive;
      }
    }
  }

  private functionValue(name: ConnectionFunction): VariableValue {
    switch (name) {
      case 'DATABASE':
      case 'SCHEMA':
        return this.database();
      case 'USER':
      case 'SESSION_USER':
      case 'SYSTEM_USER':
        return `${this.user}@${this.host}`;
      case 'CURRENT_USER':
        return `${this.user}@%`;
      case 'CONNECTION_ID':
        return this.id;
      case 'VERSION':
        return this.options.facts.serverVersion;
      case 'LAST_INSERT_ID':
      case 'FOUND_ROWS':
      case 'ROW_COUNT':
        return 0;
      default: {
        const _exhaustive: never = name;
        return _exhaustive;
      }
    }
  }

  /** Runs one statement through the engine, materialised: the session's own look-ups (SHOW COLUMNS …). */
  async query(sql: string, signal?: AbortSignal): Promise<SqlAnswer> {
    const substituted = this.forEngine(sql);
    const answer = await this.engine.execute(
      substituted.sql,
      this.context,
      this.userVariableParams(substituted.userVariables),
      signal,
      this.client,
    );
    return answer;
  }

  /**
   * A statement as the engine is given it: the connection's values written in, and MySQL's
   * information_schema tables the catalog lacks read as empty tables of MariaDB's columns.
   */
  private forEngine(sql: string) {
    const substituted = substituteConnectionValues(sql, (e) => this.valueOf(e));
    return { ...substituted, sql: writeInMysqlOnlyTables(substituted.sql, this.database()) };
  }

  private userVariableParams(names: string[]) {
    const params: Record<string, unknown> = {};
    // An unset user variable reads as NULL, as in MySQL.
    for (const name of names) params[name] = this.userVariables.get(name) ?? null;
    return params;
  }

  /**
   * Runs one statement of the client. `params` are a prepared statement's values, by the names
   * its `?` were given. Rows of a table outcome are read by the caller (they may stream).
   */
  async run(sql: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Outcome> {
    const statement = classify(sql);
    const keepsDiagnostics = statement.kind === 'showWarnings' || statement.kind === 'connectionSelect';
    if (!keepsDiagnostics) this.diagnostics = [];
    let outcome: Outcome;
    if (statement.kind === 'engine') {
      const substituted = this.forEngine(statement.sql);
      const allParams = { ...this.userVariableParams(substituted.userVariables), ...params };
      const answer = this.engine.stream
        ? await this.engine.stream(substituted.sql, this.context, allParams, signal, this.client)
        : await this.engine.execute(substituted.sql, this.context, allParams, signal, this.client);
      this.context = answer.context;
      outcome = fromAnswer(answer);
    } else outcome = await answerLocally(this, statement, signal);
    if (outcome.type === 'error') {
      if (signal?.aborted && isInterruption(signal.reason) && outcome.error_code === MysqlError.Interrupted)
        outcome = fail(MysqlError.Interrupted, Interruption[signal.reason]);
      this.diagnostics = [{ level: 'Error', code: outcome.error_code, message: outcome.error_message }];
    }
    return outcome;
  }

  /** The result just sent was cut at a row or size limit. */
  noteTruncated(rows: number) {
    this.diagnostics.push({
      level: 'Warning',
      code: MysqlError.Internal,
      message: `The result was cut after ${rows} rows: it reached the server's row or size limit (SQL_ROW_LIMIT, SQL_MAX_ANSWER_BYTES)`,
    });
  }

  /** Warnings (and notes) of the last statement, as the end of its result counts them. */
  warningCount() {
    return this.diagnostics.filter((d) => d.level !== 'Error').length;
  }

  /** COM_RESET_CONNECTION: the variables and warnings a new connection would have (the database stays). */
  reset() {
    this.variables.reset();
    this.userVariables.clear();
    this.diagnostics = [];
  }
}
