import type { ClientDialect } from '../doorway/dialect';
import type { SqlAnswer, SqlContext, SqlEngine } from '../doorway/engine';
import type { Outcome } from './outcome';
import { answerLocally } from './session/answers/answerLocally';
import { classify } from './session/classify';
import { writeInMysqlOnlyTables } from './session/mysqlOnlyTables';
import { Session } from './session/session';
import { mayReadConnection, type LocalStatement } from './session/statement';
import { substituteConnectionValues } from './session/substitute';
import type { ServerFacts } from './session/variables';

/**
 * MySQL's dialect for a statement outside a connection (the HTTP SQL endpoint: one statement, no
 * session). Tools and MindsDB's clients send the same dialect over HTTP as over the wire
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
 * MySQL's connection-level statements answered as the MySQL door answers them, and `@@x` /
 * DATABASE() / VERSION() … written in as literals (outside native queries, whose text is their
 * database's) before the engine is given the rest.
 */
export const mysqlDialect = (
  facts: ServerFacts,
  who: { user: string; host: string },
  defaultDatabase: string,
): ClientDialect => {
  const sessionFor = (context: SqlContext, engine: Pick<SqlEngine, 'execute'>) => {
    const session = new Session(0, who.user, who.host, {
      engine: { execute: (q, c, p, s) => engine.execute(q, c, p, s) },
      facts,
      server: NO_OTHER_CONNECTIONS,
      defaultDatabase,
    });
    session.context = { ...context };
    return session;
  };
  return {
    read: (query, context, engine) => {
      const statement = classify(query);
      if (statement.kind === 'engine') {
        const database = typeof context.db === 'string' && context.db ? context.db : defaultDatabase;
        // MySQL's information_schema tables the catalog lacks (ROUTINES, KEY_COLUMN_USAGE …) read as
        // over the MySQL door; texts naming none come back as they were.
        const sql = writeInMysqlOnlyTables(query, database);
        // The common case (no `@@`, no connection function) makes no session and rewrites nothing more.
        if (!mayReadConnection(sql)) return { kind: 'engine', sql, asWritten: sql === query };
        // `@name` stays the HTTP endpoint's placeholder, filled from `params` as before.
        const session = sessionFor(context, engine);
        const substituted = substituteConnectionValues(sql, (e) => session.valueOf(e));
        return { kind: 'engine', sql: substituted.sql, asWritten: false };
      }
      if (!ANSWERED_WITHOUT_CONNECTION.has(statement.kind))
        return { kind: 'engine', sql: query, asWritten: false };
      return {
        kind: 'answered',
        answer: async (signal) => {
          const session = sessionFor(context, engine);
          // As the engine's answers do, the context names the database the statement ran in.
          return asAnswer(await answerLocally(session, statement, signal), {
            ...context,
            db: session.database(),
          });
        },
      };
    },
  };
};
