import { quoteIdent, quoteMysqlIdent, quoteString } from '../shared/quoting';

/**
 * What a trigger installs in its PostgreSQL source, and how its rows are read back. A row trigger
 * copies each inserted or updated row (as JSON) into one queue table; the watcher reads the queue
 * (polling, not LISTEN: a process that was down finds the rows waiting, and any process may take
 * them), claims them through the log, and deletes them once fired. Every object's name says it is
 * ours and carries the trigger's key.
 */
export const QUEUE_TABLE = 'mindledger_trigger_queue';

const functionName = (key: string) => `mindledger_trigger_${key}`;

export const installStatements = (key: string, table: string, columns: string[] | null): string[] => [
  `CREATE TABLE IF NOT EXISTS ${QUEUE_TABLE} (id BIGSERIAL PRIMARY KEY, trigger_key TEXT NOT NULL, op TEXT NOT NULL, row_data JSONB NOT NULL, queued_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
  `CREATE INDEX IF NOT EXISTS ${QUEUE_TABLE}_key ON ${QUEUE_TABLE} (trigger_key, id)`,
  `CREATE OR REPLACE FUNCTION ${functionName(key)}() RETURNS trigger LANGUAGE plpgsql AS $body$
     BEGIN
       INSERT INTO ${QUEUE_TABLE} (trigger_key, op, row_data) VALUES (${quoteString(key)}, TG_OP, to_jsonb(NEW));
       RETURN NEW;
     END
   $body$`,
  `CREATE TRIGGER ${functionName(key)} AFTER INSERT OR UPDATE${
    columns && columns.length > 0 ? ` OF ${columns.map(quoteIdent).join(', ')}` : ''
  } ON ${quoteIdent(table)} FOR EACH ROW EXECUTE FUNCTION ${functionName(key)}()`,
];

export const uninstallStatements = (key: string, table: string): string[] => [
  `DROP TRIGGER IF EXISTS ${functionName(key)} ON ${quoteIdent(table)}`,
  `DROP FUNCTION IF EXISTS ${functionName(key)}()`,
  `DELETE FROM ${QUEUE_TABLE} WHERE trigger_key = ${quoteString(key)}`,
];

/** The queue rows of a trigger after `after`, oldest first: [id, row as JSON]. */
export const queueQuery = (limit: number) =>
  `SELECT id, row_data::text FROM ${QUEUE_TABLE} WHERE trigger_key = ? AND id > ? ORDER BY id LIMIT ${limit}`;

export const dequeueStatement = `DELETE FROM ${QUEUE_TABLE} WHERE trigger_key = ? AND id <= ?`;

/** Words that may follow a table and are not its alias. */
const NOT_ALIASES = new Set(
  'WHERE JOIN LEFT RIGHT INNER OUTER CROSS FULL NATURAL ON USING GROUP ORDER LIMIT OFFSET UNION HAVING EXCEPT INTERSECT WINDOW QUALIFY'.split(
    ' ',
  ),
);

/** A statement with TABLE_DELTA read as the rows of a firing (outside quoted text). */
export const withDelta = (statement: string, rows: Record<string, unknown>[]): string => {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const literal = (v: unknown) =>
    v === null || v === undefined
      ? 'NULL'
      : typeof v === 'number'
        ? String(v)
        : typeof v === 'boolean'
          ? v
            ? 'TRUE'
            : 'FALSE'
          : quoteString(typeof v === 'string' ? v : JSON.stringify(v));
  const values = rows.map((r) => `(${columns.map((c) => literal(r[c])).join(', ')})`).join(', ');
  const delta = `(SELECT * FROM (VALUES ${values}) AS table_delta(${columns.map(quoteMysqlIdent).join(', ')}))`;
  // Outside '…' strings, each TABLE_DELTA becomes the rows, keeping an alias it is given (else
  // aliased table_delta, so `FROM TABLE_DELTA` and `TABLE_DELTA.col` read them).
  const replaced = (part: string) =>
    part.replace(
      /\bTABLE_DELTA\b(\s+(?:AS\s+)?([A-Za-z_]\w*))?/gi,
      (_m, aliasText: string | undefined, alias: string | undefined) =>
        alias && !NOT_ALIASES.has(alias.toUpperCase())
          ? `${delta}${aliasText}`
          : `${delta} AS table_delta${aliasText ?? ''}`,
    );
  return statement
    .split(/('(?:[^']|'')*')/)
    .map((part, i) => (i % 2 === 1 ? part : replaced(part)))
    .join('');
};
