import type { AppContext } from '../../context';
import { currentRequest } from '../../shared/requestContext';
import { writtenLabels } from '../../shared/sqlLabels';
import type { ErrorAnswer, OkAnswer, SqlContext, TableAnswer } from '../answers';
import { ownWritesApplied, type AnswerCache } from '../pipeline/answerCache';
import { deadlineIn, withinDeadline, type Deadline } from '../deadline';
import { SqlError, SqlErrorCode, toSqlError } from '../errors';
import type { StatementContext, StatementHandlers, StatementKindName, StatementOf } from '../handlers';
import { leadingKeyword, trimStatement } from '../lexical';
import { statementKindOf, type SqlObserver, type StatementKind } from '../observer';
import { tooManyParameters } from '../pipeline/parameters';
import { isSyntaxProblem, parseMindsStatement } from '../parse';
import type { TablePolicy } from '../pipeline/plan';
import { checkQuerySize } from '../pipeline/query';
import { callerPolicyOf, checkStatement, type Registrations } from './roles';
import { FORBIDDEN, SELECT_LIKE } from '../pipeline/selectText';
import { unsupportedStatement } from './unsupported';

const DEFAULT_DB = 'mindsdb';

/** How a client's SELECT is read once the dispatcher has its policy: whole, or streamed. */
type Selecting<T> = (request: {
  sql: string;
  db: string;
  params: Record<string, unknown>;
  deadline: Deadline;
  signal?: AbortSignal;
  policy?: TablePolicy;
}) => Promise<T>;

type DispatcherDeps = {
  readonly ctx: Pick<AppContext, 'config' | 'logger' | 'ownWrites'>;
  /** Every statement kind the grammar makes, and what runs it: complete by type. */
  readonly handlers: StatementHandlers;
  readonly cache: AnswerCache;
  readonly observer: SqlObserver;
  readonly registrations: () => Promise<Registrations>;
};

/** Why a statement that is not a SELECT is refused before parsing, if it is. */
const refusal = (sql: string, keyword: string) => {
  const unsupported = unsupportedStatement(sql);
  if (unsupported) return unsupported;
  if (FORBIDDEN.has(keyword))
    return new SqlError(
      SqlErrorCode.Forbidden,
      `${keyword} is not allowed: the tables are projections of the event log and change only through commands`,
    );
  return undefined;
};

/** The error a statement the grammar does not read answers: a write to a table, or a syntax error. */
const syntaxError = (
  sql: string,
  keyword: string,
  problem: { line: number; column: number; message: string },
) => {
  if (
    ['UPDATE', 'DROP', 'ALTER', 'CREATE', 'INSERT', 'DELETE'].includes(keyword) &&
    !/\b(PROJECT|DATABASE|SCHEMA|SKILL|AGENT|CHATBOT|KNOWLEDGE(?:_BASES?)?|JOB|VIEW|TRIGGER|LLM_BUDGET)\b/i.test(
      sql.slice(0, 40),
    )
  )
    return new SqlError(
      SqlErrorCode.Forbidden,
      `${keyword} of tables is not allowed: the tables are projections of the event log and change only through commands`,
    );
  return new SqlError(
    SqlErrorCode.Syntax,
    `Syntax error at line ${problem.line}, column ${problem.column}: ${problem.message}`,
  );
};

/**
 * The dispatcher: one statement's text to its answer. It caps the text and its parameters, tells a
 * SELECT (read by `selecting`, after the answer cache and this process's own writes) from the other
 * statements (refused, or parsed and checked against the caller's role, then run by their kind's
 * handler), and maps every failure to a SQL error answer, counted and logged. Never throws.
 */
export const statementDispatcher = (deps: DispatcherDeps) => {
  const { ctx, cache, observer } = deps;
  /** A statement to its kind's handler (the map's type ties each kind to its statement's shape). */
  const dispatch = <K extends StatementKindName>(
    kind: K,
    statement: StatementOf<K>,
    context: StatementContext,
  ) => deps.handlers[kind](statement, context);

  /** A client's SELECT: the answer kept for it, once this process's writes are applied, or read. */
  const selectAnswer = async <T extends { column_names: string[] }>(
    sql: string,
    db: string,
    params: Record<string, unknown>,
    deadline: Deadline,
    signal: AbortSignal | undefined,
    selecting: Selecting<T>,
  ): Promise<T | TableAnswer> => {
    const policy = await callerPolicyOf(currentRequest()?.principal, deps.registrations);
    // An answer in hand is given at once (no deadline timer), once this process's writes to what
    // it read are applied; `selecting` reads and fills the cache (a caller under a role's policy
    // neither). A miss by text is counted by `selecting`, once it has looked by the rewritten text.
    const known = policy ? undefined : await cache.knownAfterOwnWrites(cache.sentKey(sql, db, params));
    if (known) observer.cacheLookup('answer', true);
    else await ownWritesApplied(ctx);
    const table =
      known ?? (await withinDeadline(selecting({ sql, db, params, deadline, signal, policy }), deadline));
    // Labelled as MySQL labels them (src/sql/labels.ts), whichever door asked.
    return { ...table, column_names: writtenLabels(sql, table.column_names) };
  };

  /**
   * One line per failed statement, with the request id: its kind and error code only. Messages
   * quote what the client wrote (a literal, a name, a password in a USING clause), so they are not
   * logged; an internal error (our bug) keeps the error itself, which the operator needs.
   */
  const logSqlError = (kind: StatementKind, code: number, error: unknown) => {
    const request = currentRequest();
    const fields = { reqId: request?.requestId, via: request?.interface, statement: kind, sqlError: code };
    if (code === SqlErrorCode.Internal) ctx.logger.error({ ...fields, err: error }, 'SQL statement failed');
    else ctx.logger.info(fields, 'SQL statement failed');
  };

  /** One statement; its SELECTs read through `selecting` (whole, or streamed). Never throws. */
  return async <T extends { type: 'table'; column_names: string[] }>(
    query: string,
    context: SqlContext,
    params: Record<string, unknown>,
    signal: AbortSignal | undefined,
    selecting: Selecting<T>,
  ): Promise<(T | TableAnswer | OkAnswer | ErrorAnswer) & { context: SqlContext }> => {
    // SQL_TIMEOUT_MS counts from here: rewriting, name resolution, fetches and DuckDB's work.
    const deadline = deadlineIn(ctx.config.sqlTimeoutMs);
    const started = performance.now();
    let db = typeof context.db === 'string' && context.db ? context.db : DEFAULT_DB;
    /** What the statement is, once known (metrics and logs name it; they never quote its text). */
    let kind: StatementKind = 'invalid';
    const answer = async (): Promise<T | TableAnswer | OkAnswer> => {
      checkQuerySize(query, ctx.config.sqlMaxQueryBytes);
      // Before the answer cache's key is made of them, or anything else reads them.
      const sent = Object.keys(params).length;
      if (sent > ctx.config.sqlMaxParams)
        throw tooManyParameters(`is sent ${sent} parameters`, ctx.config.sqlMaxParams);
      const sql = trimStatement(query);
      if (!sql) throw new SqlError(SqlErrorCode.Syntax, 'The query is empty');
      const keyword = leadingKeyword(sql);
      if (SELECT_LIKE.has(keyword)) {
        kind = 'select';
        return selectAnswer(sql, db, params, deadline, signal, selecting);
      }
      await ownWritesApplied(ctx);
      const refused = refusal(sql, keyword);
      if (refused) {
        kind = 'forbidden';
        throw refused;
      }
      const parsed = parseMindsStatement(sql);
      if (isSyntaxProblem(parsed)) throw syntaxError(sql, keyword, parsed);
      kind = statementKindOf(parsed.kind);
      checkStatement(currentRequest()?.principal, parsed.kind);
      const use = (database: string) => {
        db = database;
      };
      return dispatch(parsed.kind, parsed, { db, sql, params, deadline, use });
    };
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = await answer();
      observer.answered({ kind, outcome: result.type === 'ok' ? 'ok' : 'table', seconds: seconds() });
      return { ...result, context: { ...context, db } };
    } catch (error) {
      const e = toSqlError(error);
      observer.answered({ kind, outcome: 'error', seconds: seconds(), errorCode: e.code });
      logSqlError(kind, e.code, error);
      return { type: 'error', error_code: e.code, error_message: e.message, context: { ...context, db } };
    }
  };
};
