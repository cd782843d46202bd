import {
  JSDuckDBValueConverter,
  type DuckDBConnection,
  type DuckDBMaterializedResult,
  type DuckDBValue,
} from '@duckdb/node-api';

type Params = DuckDBValue[] | Record<string, DuckDBValue>;

/**
 * `runAndReadAll(sql, params)` then `getRowObjectsJS()`, the same rows in the same shape, in fewer
 * trips to DuckDB's threads. That path made five with parameters (extract the statements, prepare
 * the last, run it materialized, then fetch its chunks one trip each, the last one empty) and three
 * without; here a parameterised read is two (prepare, run materialized) and a plain one is one
 * (`duckdb_query`), the materialized result's chunks read where they already are. Measured on a
 * skills list's read: 5 trips to 2 and about a third of its CPU (docs/benchmarks.md, Mixed load).
 * A text of several statements with parameters (DuckDB prepares one statement at a time) goes the
 * old way: every statement but the last run, the last bound.
 */
export const readRowObjects = async (
  c: DuckDBConnection,
  sql: string,
  params?: Params,
): Promise<Record<string, unknown>[]> => {
  if (!params) return rowObjectsOf(await c.run(sql));
  let prepared;
  try {
    prepared = await c.prepare(sql);
  } catch (error) {
    // Not `instanceof Error`: the binding's errors may come from another realm (jest's).
    if (
      !String((error as { message?: unknown } | null)?.message).includes('Cannot prepare multiple statements')
    )
      throw error;
    return (await c.runAndReadAll(sql, params)).getRowObjectsJS() as Record<string, unknown>[];
  }
  try {
    prepared.bind(params);
    return rowObjectsOf(await prepared.run());
  } finally {
    prepared.destroySync();
  }
};

/**
 * What of a materialized result the rows are read from: its chunks (all of them, where the old
 * path fetched them one by one) and its column names as the reader names them (a name met twice
 * gets a suffix). One object, so that a spec's kill check can break either.
 */
export const materialized = {
  chunkCount: (result: DuckDBMaterializedResult): number => result.chunkCount,
  names: (result: DuckDBMaterializedResult): readonly string[] => result.deduplicatedColumnNames(),
};

/** The rows of a materialized result as `DuckDBResultReader.getRowObjectsJS` makes them. */
const rowObjectsOf = (result: DuckDBMaterializedResult): Record<string, unknown>[] => {
  const names = materialized.names(result);
  const rows: Record<string, unknown>[] = [];
  const chunks = materialized.chunkCount(result);
  for (let i = 0; i < chunks; i++) {
    const chunk = result.getChunk(i);
    const rowCount = chunk.rowCount;
    for (let row = 0; row < rowCount; row++) {
      const object: Record<string, unknown> = {};
      chunk.visitRowValues(row, (value, _row, column, type) => {
        object[names[column]!] = JSDuckDBValueConverter(value, type, JSDuckDBValueConverter);
      });
      rows.push(object);
    }
  }
  return rows;
};
