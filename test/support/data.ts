import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

/** The repository: two levels above test/support; three once compiled into dist-bench/ (`npm run bench`). */
export const REPOSITORY = path.resolve(__dirname, __filename.endsWith('.js') ? '../../..' : '../..');

/** A dataset from `../shared/data` (beside the repository, on every machine and in CI). */
export const sharedData = (file: string) => {
  const full = path.resolve(REPOSITORY, '../shared/data', file);
  if (!fs.existsSync(full))
    throw new Error(
      `${full} is missing: the tests read the shared datasets from ../shared/data beside the repository`,
    );
  return full;
};

/**
 * A shared CSV as rows of strings, read by DuckDB's `read_csv` as uploads are (quoted cells such
 * as home_rentals' "640,56" included); the engine infers the types itself.
 */
export const readSharedCsv = async (file: string): Promise<Record<string, string>[]> => {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const literal = `'${sharedData(file).replace(/'/g, "''")}'`;
    const reader = await connection.runAndReadAll(
      `SELECT * FROM read_csv(${literal}, all_varchar = true, header = true)`,
    );
    return reader.getRowObjectsJS() as Record<string, string>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
};
