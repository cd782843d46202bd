import type { CatalogResolver } from '../catalog/catalog';
import type { Deadline } from '../deadline';
import { extractNativeQueries } from '../faces/integration/federation';
import { quoteModelVersions, toDuckDbDialect } from '../lexical';
import { addModelJoinConditions } from '../faces/model/modelJoins';
import { takePredictOptions } from '../faces/model/predictOptions';

/**
 * A client's SELECT (MySQL dialect, MindsDB names) as the engine runs it: native queries on
 * registered databases taken out, DuckDB's dialect, model versions quoted, joins with models and
 * agents given their conditions, a closing `USING k = v` (prediction options) taken off. Each step is linear in the text (at most SQL_MAX_QUERY_BYTES);
 * the deadline is checked between them and the name lookups they make.
 */
export const selectText = async (catalog: CatalogResolver, sql: string, db: string, deadline: Deadline) => {
  const extracted = await extractNativeQueries(sql, (name) => catalog.integration(name));
  deadline.check();
  const predict = takePredictOptions(extracted.sql);
  const converted = toDuckDbDialect(predict.sql);
  converted.sql = quoteModelVersions(converted.sql);
  deadline.check();
  const joined = await addModelJoinConditions(
    converted.sql,
    async (schema, table) =>
      (await catalog.agent(schema ?? db, table)) !== undefined ||
      (await catalog.model(schema ?? db, table)) !== undefined,
  );
  deadline.check();
  return { ...converted, sql: joined, natives: extracted.natives, predictOptions: predict.options };
};

/** Statements DuckDB would run but that must never reach it from a client. */
export const FORBIDDEN = new Set([
  'TRUNCATE',
  'MERGE',
  'COPY',
  'EXPORT',
  'IMPORT',
  'ATTACH',
  'DETACH',
  'INSTALL',
  'LOAD',
  'PRAGMA',
  'CALL',
  'CHECKPOINT',
  'FORCE',
  'VACUUM',
  'ANALYZE',
  'GRANT',
  'REVOKE',
  'COMMENT',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'ABORT',
  'PREPARE',
  'EXECUTE',
  'DEALLOCATE',
  'RESET',
  'SUMMARIZE',
  'EXPLAIN',
]);
/** Statements that read (through the SELECT path). */
export const SELECT_LIKE = new Set(['SELECT', 'WITH', 'VALUES', 'FROM', 'TABLE']);
