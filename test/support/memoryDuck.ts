import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

/**
 * An in-memory DuckDB connection for the describe block this is called in: opened before its
 * tests, closed after them. Answers a getter (the connection exists only once the block runs).
 */
export const inMemoryConnection = (): (() => DuckDBConnection) => {
  let instance: DuckDBInstance | undefined;
  let c: DuckDBConnection | undefined;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    c = await instance.connect();
  });
  afterAll(() => {
    c?.closeSync();
    instance?.closeSync();
  });
  return () => {
    if (!c) throw new Error('the in-memory DuckDB is open only while its describe block runs');
    return c;
  };
};
