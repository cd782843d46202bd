import type { Outcome } from './outcome';
import type { SqlAnswer, SqlContext, SqlEngine } from './port';
import { answerLocally } from './session/answers/answerLocally';
import { classify } from './session/classify';
import { writeInMysqlOnlyTables } from './session/mysqlOnlyTables';
import { Session } from './session/session';
import { mayReadConnection, type LocalStatement } from './session/statement';
import { substituteConnectionValues } from './session/substitute';
import type { ServerFacts } from './session/variables';

/**
 * What a statement outside a connection (the HTTP SQL endpoint: one statement, no session) answers
 * as MySQL does. Tools and MindsDB's clients send the same dialect over HTTP as over the wire
 * (`SELECT @@version`, `SHOW VARIABLES LIKE 'version%'`, `SHOW FULL COLUMNS FROM t`), so both doors
 * answer them with one code: each statement gets a fresh session (the server's variables, the
 * request's database), and nothing it sets outlives it.
 *
 * Only look-ups are answered here. SET, transactions, SHOW WARNINGS, SHOW PROCESSLIST and KILL stay
 * the engine's over HTTP: there is no connection for them to act on; nor SHOW GRANTS, which names
 * a MySQL account, and an HTTP caller has none.
 */
const ANSWERED_WITHOUT_CONNECTION: ReadonlySet<LocalStatement['kind']> = new Set([
  'connectionSelect',
  'showVariables',
  'showColumns',
  'showCreateTable',
  'showCreateDatabase',
  'showIndex',
  'showTableStatus',
  'showCollation',
  'showCharset',
  'showPlugins',
]);

const NO_OTHER_CONNECTIONS = { processes: () => [], kill: () => false };

const collected = async (rows: AsyncIterable<unknown[][]> | unknown[][]): Promise<unknown[][]> => {
  if (Array.isArray(rows)) return rows;
  const all: unknown[][] = [];
  for await (const chunk of rows) all.push(...chunk);
  return all;
};

const asAnswer = async (outcome: Outcome, context: SqlContext): Promise<SqlAnswer> => {
  switch (outcome.type) {
    case 'table':
      return {
        type: 'table',
        column_names: outcome.column_names,
        column_types: outcome.column_types,
        data: await collected(outcome.rows),
        context,
      };
    case 'ok':
      return { type: 'ok', affected_rows: outcome.affectedRows, context };
    case 'error':
      return { ...outcome, context };
    default: {
      const _exhaustive: never = outcome;
      return _exhaustive;
    }
  }
};

/**
 * Whether the engine answers `query` over HTTP as written, nothing of MySQL's connection written in
 * first (`@@x`, DATABASE(), MySQL-only information_schema tables): its rows may stream straight
 * from the engine. `database` is the statement's current database.
 */
export const answeredAsWritten = (query: string, database: string) =>
  classify(query).kind === 'engine' &&
  !mayReadConnection(query) &&
  writeInMysqlOnlyTables(query, database) === query;

export type OneStatement = (
  query: string,
  context: SqlContext,
  params: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<SqlAnswer>;

/**
 * The engine's `execute` with MySQL's connection-level statements answered as the MySQL door
 * answers them, and `@@x` / DATABASE() / VERSION() … written in as literals before the engine sees
 * the rest.
 */
export const mysqlDialectOutsideConnections = (
  engine: Pick<SqlEngine, 'execute'>,
  facts: ServerFacts,
  who: { user: string; host: string },
  defaultDatabase: string,
): OneStatement => {
  const sessionEngine: SqlEngine = { execute: (q, c, p, s) => engine.execute(q, c, p, s) };
  const sessionFor = (context: SqlContext) => {
    const session = new Session(0, who.user, who.host, {
      engine: sessionEngine,
      facts,
      server: NO_OTHER_CONNECTIONS,
      defaultDatabase,
    });
    session.context = { ...context };
    return session;
  };
  return async (query, context, params, signal) => {
    const statement = classify(query);
    if (statement.kind === 'engine') {
      // MySQL's information_schema tables the catalog lacks (ROUTINES, KEY_COLUMN_USAGE …) read as
      // over the MySQL door; texts naming none come back as they were.
      const sql = writeInMysqlOnlyTables(
        query,
        typeof context.db === 'string' && context.db ? context.db : defaultDatabase,
      );
      // The common case (no `@@`, no connection function) makes no session and rewrites nothing more.
      if (!mayReadConnection(sql)) return engine.execute(sql, context, params, signal);
      const session = sessionFor(context);
      // `@name` stays the HTTP endpoint's placeholder, filled from `params` as before.
      const substituted = substituteConnectionValues(sql, (e) => session.valueOf(e));
      return engine.execute(substituted.sql, context, params, signal);
    }
    if (!ANSWERED_WITHOUT_CONNECTION.has(statement.kind))
      return engine.execute(query, context, params, signal);
    const session = sessionFor(context);
    // As the engine's answers do, the context names the database the statement ran in.
    return asAnswer(await answerLocally(session, statement, signal), { ...context, db: session.database() });
  };
};
