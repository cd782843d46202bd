import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';

/** Per connection, the statements `scalarOn` has prepared, and whether one is running. */
const preparedOn = new WeakMap<
  DuckDBConnection,
  { statements: Map<string, DuckDBPreparedStatement>; busy: boolean }
>();

/**
 * The one value `sql` answers on `c`, with `text` as its one parameter when given. Prepared once per
 * connection and run materialized, a call is one trip to DuckDB's threads, where `runAndReadAll`
 * makes six (extract, prepare, bind, run, two fetches): for the statements the service runs around
 * every query (the parse and print of a SELECT, the look at DuckDB's memory after a run). A bound
 * value stays on the statement until it runs, so a call while another runs on the same connection
 * goes the long way.
 */
export const scalarOn = async (c: DuckDBConnection, sql: string, text?: string): Promise<unknown> => {
  let cache = preparedOn.get(c);
  if (!cache) preparedOn.set(c, (cache = { statements: new Map(), busy: false }));
  if (cache.busy)
    return (await c.runAndReadAll(sql, text === undefined ? undefined : [text])).getRows()[0]?.[0] ?? null;
  cache.busy = true;
  try {
    let prepared = cache.statements.get(sql);
    if (!prepared) cache.statements.set(sql, (prepared = await c.prepare(sql)));
    if (text !== undefined) prepared.bindVarchar(1, text);
    const result = await prepared.run();
    return result.chunkCount > 0 && result.rowCount > 0
      ? result.getChunk(0).getColumnVector(0).getItem(0)
      : null;
  } finally {
    cache.busy = false;
  }
};
