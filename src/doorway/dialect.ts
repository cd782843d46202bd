import type { SqlAnswer, SqlContext, SqlEngine } from './engine';

/**
 * How a client dialect reads one statement sent outside any connection (the HTTP SQL endpoint: no
 * session, nothing outlives the statement): answered by the dialect itself (its clients'
 * look-ups, using the engine for data), or handed to the engine as `sql`, with what the dialect
 * writes in first (its connection values, its own catalog tables). `asWritten`: nothing of the
 * dialect is in the text, so its rows may stream straight from the engine.
 */
type DialectReading =
  | { kind: 'engine'; sql: string; asWritten: boolean }
  | { kind: 'answered'; answer: (signal?: AbortSignal) => Promise<SqlAnswer> };

/**
 * A client dialect's compatibility answers (MySQL's `@@version`, `VERSION()`, SHOW VARIABLES …):
 * given by the dialect a door speaks, never by the engine, so the engine answers a statement the
 * same over every door and a native query's text goes to its database untouched.
 */
export type ClientDialect = {
  /** `engine` is what the dialect's own answers read their data from. */
  read(query: string, context: SqlContext, engine: Pick<SqlEngine, 'execute'>): DialectReading;
};

type OneStatement = (
  query: string,
  context: SqlContext,
  params: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<SqlAnswer>;

/**
 * The engine as a door speaking `dialect` offers it one statement at a time: `execute` answers
 * what the dialect answers itself and gives the engine the rest as the dialect wrote it;
 * `asWritten` says whether the engine is given the text unchanged (its rows may then stream
 * straight from the engine; the rest is answered whole).
 */
export const speaking = (engine: Pick<SqlEngine, 'execute'>, dialect: ClientDialect) => {
  const execute: OneStatement = (query, context, params, signal) => {
    const reading = dialect.read(query, context, engine);
    return reading.kind === 'engine'
      ? engine.execute(reading.sql, context, params, signal)
      : reading.answer(signal);
  };
  const asWritten = (query: string, context: SqlContext) => {
    const reading = dialect.read(query, context, engine);
    return reading.kind === 'engine' && reading.asWritten;
  };
  return { execute, asWritten };
};
