import { SqlSyntaxError } from '../shared/sqlTokens';
import {
  badGateway,
  conflict,
  forbidden,
  gatewayTimeout,
  invalid,
  isDomainError,
  isProjectNotFound,
  notFound,
  unavailable,
  type DomainError,
} from '../shared/errors';
import { isOutOfMemoryMessage } from '../duckdb/errors';
import { VALUE_TOO_LARGE } from '../duckdb/valueGuards';
import type { MemoryPressure } from '../duckdb/database';

/**
 * SQL errors answer `{type: "error", error_code, error_message}` with HTTP 200, as MindsDB.
 * Codes follow MySQL's numbering where one fits, so MySQL-minded clients can react to them:
 */
export const SqlErrorCode = {
  /** The statement does not parse. */
  Syntax: 1064,
  /** The database (project, integration) does not exist. */
  UnknownDatabase: 1049,
  /** The table does not exist. */
  UnknownTable: 1146,
  /** A column, function or other name the query uses does not exist, or types do not fit. */
  Binder: 1054,
  /** The statement is not allowed here (writes to projections, file access, settings, extensions). */
  Forbidden: 1227,
  /** A placeholder has no value in `params`. */
  MissingParameter: 1318,
  /** A resource named by the statement does not exist. */
  NotFound: 1032,
  /** A resource with that name exists already. */
  Conflict: 1062,
  /** Arguments are invalid (validation of a command). */
  Invalid: 1210,
  /** The query ran past the time limit and was interrupted. */
  Timeout: 3024,
  /** The client went away and the query was interrupted. */
  Interrupted: 1317,
  /** An external database could not be reached. */
  ExternalUnreachable: 2003,
  /** Another error reported by an external database (MySQL's "got error from engine"; its message is kept). */
  External: 1296,
  /** The server is too busy to run the query now (MySQL's "too many connections"); try again. */
  Busy: 1040,
  /** The query, a parameter or the query's shape is over a configured limit (MySQL's "packet too large"). */
  TooLarge: 1153,
  /** Anything else (an external database's own error keeps its message). */
  Internal: 1105,
} as const;

export class SqlError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'SqlError';
  }
}

const fromDomain = (e: DomainError): SqlError => {
  switch (e.kind) {
    case 'NotFound':
      // A project is a database to SQL: naming one that does not exist is MySQL's unknown database,
      // as a SELECT from it answers.
      return new SqlError(
        isProjectNotFound(e) ? SqlErrorCode.UnknownDatabase : SqlErrorCode.NotFound,
        e.detail,
      );
    case 'Conflict':
      return new SqlError(SqlErrorCode.Conflict, e.detail);
    case 'PreconditionFailed':
      return new SqlError(SqlErrorCode.Conflict, e.detail);
    case 'Unavailable':
      return new SqlError(SqlErrorCode.Busy, e.detail);
    // Too much asked of one statement (too many LLM calls, rows for an agent): a query too large.
    case 'PayloadTooLarge':
      return new SqlError(SqlErrorCode.TooLarge, e.detail);
    case 'Unauthorized':
    case 'Forbidden':
      return new SqlError(SqlErrorCode.Forbidden, e.detail);
    case 'GatewayTimeout':
      return new SqlError(SqlErrorCode.Timeout, e.detail);
    case 'BadGateway':
    case 'TooManyRequests':
      return new SqlError(SqlErrorCode.External, e.detail);
    default:
      return new SqlError(SqlErrorCode.Invalid, e.detail);
  }
};

/**
 * A SQL error met while serving a REST request (a query in its body: a knowledge base's rows, a
 * model's training data) as the problem REST answers with: the SQL endpoint's codes, mapped back.
 */
export const domainErrorOf = (thrown: unknown): unknown => {
  // DuckDB's own errors ("Binder Error: …") are the query's; anything else is a bug, kept as it is.
  const message = (thrown as { message?: unknown } | null)?.message;
  const sqlError =
    thrown instanceof SqlError || thrown instanceof SqlSyntaxError
      ? toSqlError(thrown)
      : typeof message === 'string' && /^[A-Z][A-Za-z ]* Error: /.test(message)
        ? toSqlError(thrown)
        : null;
  if (!sqlError) return thrown;
  const error = sqlError;
  switch (error.code) {
    case SqlErrorCode.Forbidden:
      return forbidden(error.message);
    case SqlErrorCode.UnknownDatabase:
    case SqlErrorCode.UnknownTable:
    case SqlErrorCode.NotFound:
      return notFound(error.message);
    case SqlErrorCode.Conflict:
      return conflict(error.message);
    case SqlErrorCode.Busy:
      return unavailable(error.message);
    case SqlErrorCode.Timeout:
      return gatewayTimeout(error.message);
    case SqlErrorCode.ExternalUnreachable:
    case SqlErrorCode.External:
      return badGateway(error.message);
    default:
      return invalid(error.message, 'Invalid query');
  }
};

/** Why a `$name` has no value even when "params" holds `name`: the placeholders bound here are :name and @name. */
export const UNBOUND_DOLLAR =
  'Placeholders are written :name or @name and bound from "params"; $name is DuckDB\'s own, which nothing binds';

/** DuckDB's own messages are precise; only their kind is mapped to a code. */
const fromDuckDb = (message: string): SqlError => {
  if (/^Parser Error/.test(message)) return new SqlError(SqlErrorCode.Syntax, message);
  if (/^Catalog Error: Table/.test(message)) return new SqlError(SqlErrorCode.UnknownTable, message);
  if (/^(Binder|Catalog|Conversion) Error/.test(message)) return new SqlError(SqlErrorCode.Binder, message);
  if (/^Permission Error/.test(message)) return new SqlError(SqlErrorCode.Forbidden, message);
  // Past DuckDB's memory_limit, or a value past SQL_MAX_VALUE_BYTES (valueGuards.ts): the query's
  // size, a limit of the server's, not its failure. DuckDB's advice (SET memory_limit, threads) is
  // nothing a client may do: only its first line is kept.
  if (isOutOfMemoryMessage(message))
    return new SqlError(
      SqlErrorCode.TooLarge,
      `The query needs more memory than the server allows (DUCKDB_MEMORY_LIMIT): ${message.split('\n')[0]}`,
    );
  if (message.startsWith('Invalid Input Error: ') && message.includes(VALUE_TOO_LARGE))
    return new SqlError(SqlErrorCode.TooLarge, message.slice('Invalid Input Error: '.length));
  // A `$name` DuckDB reads as a parameter of its own, which nobody binds.
  if (
    /^Invalid Input Error: Values were not provided for the following prepared statement parameters/.test(
      message,
    )
  )
    return new SqlError(SqlErrorCode.MissingParameter, `${message}. ${UNBOUND_DOLLAR}`);
  // What the statement's own values cannot be (bad JSON, a bad pattern, a number out of range):
  // the client's to correct, not the engine failing.
  if (/^(Invalid Input|Out of Range) Error/.test(message)) return new SqlError(SqlErrorCode.Invalid, message);
  // The bindings' own conversion of a bound value ("bigint out of hugeint range"): the value is the client's.
  if (/^\w+ out of (u?int64|u?hugeint) range$/.test(message))
    return new SqlError(SqlErrorCode.Invalid, message);
  if (/^INTERRUPT Error|Interrupted/.test(message)) return new SqlError(SqlErrorCode.Interrupted, message);
  // DuckDB's own failures (a catalog write-write conflict, an assertion) say nothing a client can
  // act on and may name internals: the client learns the kind, the operator's log has the rest.
  const internal = /^(TransactionContext|INTERNAL|FATAL) Error/.exec(message);
  if (internal)
    return new SqlError(
      SqlErrorCode.Internal,
      `The query engine failed internally (${internal[1]} error); retry the statement`,
    );
  return new SqlError(SqlErrorCode.Internal, message);
};

const mebibytes = (bytes: number) => Math.round(bytes / (1024 * 1024));

/** Why the memory watch (src/duckdb/memoryWatch.ts) stopped a query or a read, as its caller is told. */
export const memoryStopped = (pressure: MemoryPressure): SqlError => {
  switch (pressure.kind) {
    case 'process':
      return new SqlError(
        SqlErrorCode.TooLarge,
        `The query was stopped: the server's memory reached ${mebibytes(pressure.rss)} MiB, past SQL_MAX_PROCESS_MEMORY (${mebibytes(pressure.limit)} MiB)`,
      );
    case 'heap':
      return new SqlError(
        SqlErrorCode.TooLarge,
        `The query was stopped: the server's JavaScript heap reached ${mebibytes(pressure.used)} MiB, past ${mebibytes(pressure.ceiling)} MiB of its ${mebibytes(pressure.limit)} MiB limit`,
      );
    case 'engine':
      return new SqlError(
        SqlErrorCode.TooLarge,
        `The query was stopped to keep room for writes: the query engine's memory that cannot spill to disk reached ${mebibytes(pressure.held)} MiB, past ${mebibytes(pressure.ceiling)} MiB of DUCKDB_MEMORY_LIMIT (${mebibytes(pressure.limit)} MiB)`,
      );
  }
};

/** An external database's error, with the database named and the kind mapped to our codes. */
export const externalError = (integration: string, error: unknown): SqlError => {
  const e = error as { message?: string; code?: string; errno?: number };
  const message = `${integration}: ${e.message || e.code || String(error)}`;
  const code = String(e.code ?? '');
  if (
    /^(ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|ECONNRESET|PROTOCOL_CONNECTION_LOST)$/.test(code) ||
    /timeout/i.test(e.message ?? '')
  )
    return new SqlError(SqlErrorCode.ExternalUnreachable, message);
  if (code === '42P01' || code === 'ER_NO_SUCH_TABLE')
    return new SqlError(SqlErrorCode.UnknownTable, message);
  if (code === '42601' || code === 'ER_PARSE_ERROR') return new SqlError(SqlErrorCode.Syntax, message);
  if (code === '42703' || code === 'ER_BAD_FIELD_ERROR') return new SqlError(SqlErrorCode.Binder, message);
  return new SqlError(SqlErrorCode.External, message);
};

export const toSqlError = (error: unknown): SqlError => {
  if (error instanceof SqlError) return error;
  if (error instanceof SqlSyntaxError) return new SqlError(SqlErrorCode.Syntax, error.message);
  if (isDomainError(error)) return fromDomain(error);
  // Not `instanceof Error`: DuckDB's errors come from another realm under some runners (jest).
  const message = (error as { message?: unknown } | null)?.message;
  return fromDuckDb(typeof message === 'string' ? internalNamesToMindsDb(message) : String(error));
};

/** DuckDB's messages name our physical schemas and renamed CTEs; clients know MindsDB's names. */
const internalNamesToMindsDb = (message: string) =>
  stripServerPaths(
    message
      .replace(/"?mdb_project_([a-z0-9_]+)"?\./g, '$1.')
      .replace(/"?mdb_information_schema"?\./g, 'information_schema.')
      .replace(/__mindledger_cte_\d+_/g, ''),
  );

/** Directories of this server (data, DuckDB file, temp, working and home directories). */
let serverPaths: string[] = [];

/** Registers the directories whose paths must never reach a client; the longest are matched first. */
export const configureServerPaths = (paths: string[]) => {
  // Added to, not replaced: several services in one process (tests) each register theirs.
  serverPaths = [
    ...new Set([...serverPaths, ...paths.map((p) => p.replace(/\/+$/, '')).filter((p) => p.length > 1)]),
  ].sort((a, b) => b.length - a.length);
};

/**
 * DuckDB's IO errors name files by their absolute path ("Failed to create directory
 * "/srv/data/duckdb.tmp""): a path under one of the server's directories becomes `<server path>/name`,
 * keeping only the last component, which is what a client or an operator reading it can act on.
 */
const stripServerPaths = (message: string) => {
  let out = message;
  for (const root of serverPaths) {
    let at = out.indexOf(root);
    while (at !== -1) {
      let end = at + root.length;
      // Only a whole path component: /data must not match /database.
      if (end === out.length || /[/"'\s:),]/.test(out[end]!)) {
        while (end < out.length && !/["'\s,)]/.test(out[end]!)) end++;
        const path = out.slice(at, end);
        const last = path.slice(root.length).split('/').filter(Boolean).pop();
        const replacement = last ? `<server path>/${last}` : '<server path>';
        out = out.slice(0, at) + replacement + out.slice(end);
        at = out.indexOf(root, at + replacement.length);
      } else at = out.indexOf(root, end);
    }
  }
  return out;
};
