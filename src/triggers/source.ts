import { quoteIdent, quoteMysqlIdent, quoteString } from '../shared/quoting';
import { isRelationName, tokenize, type Token } from '../shared/sqlTokens';

/**
 * What a trigger installs in its PostgreSQL source, and how its rows are read back. A row trigger
 * copies each inserted or updated row (as JSON) into one queue table per schema; the watcher reads
 * the queue (polling, not LISTEN: a process that was down finds the rows waiting, and any process
 * may take them), claims them through the log, and deletes them once fired. Every object's name
 * says it is ours and carries the trigger's key, and every name is qualified by the integration's
 * schema: the customer's own clients insert with their own search_path, never ours.
 */
const QUEUE_TABLE = 'mindledger_trigger_queue';

const FUNCTION_PREFIX = 'mindledger_trigger_';
const functionName = (key: string) => `${FUNCTION_PREFIX}${key}`;
const qualified = (schema: string, name: string) => `${quoteIdent(schema)}.${quoteIdent(name)}`;
const queueTable = (schema: string) => qualified(schema, QUEUE_TABLE);

/** Text as a PostgreSQL dollar-quoted literal, its tag one the text does not hold. */
const dollarQuoted = (text: string) => {
  let tag = '$mindledger$';
  for (let n = 1; text.includes(tag); n++) tag = `$mindledger${n}$`;
  return `${tag}${text}${tag}`;
};

/**
 * Install and uninstall of one schema's objects take turns (inside the transaction `run` opens):
 * a trigger created while the last one is dropped never finds its queue table gone.
 */
const schemaLock = (schema: string) =>
  `SELECT pg_advisory_xact_lock(hashtext(${quoteString(`${QUEUE_TABLE}:${schema}`)}))`;

/**
 * The queue table (with its index), the function and the row trigger. The function runs as its
 * owner (SECURITY DEFINER: a role that may insert into the table needs no right on our queue) with
 * its search_path pinned (the safe form of a definer's function), so every name in it is qualified.
 */
export const installStatements = (
  key: string,
  schema: string,
  table: string,
  columns: string[] | null,
): string[] => [
  schemaLock(schema),
  `CREATE TABLE IF NOT EXISTS ${queueTable(schema)} (id BIGSERIAL PRIMARY KEY, trigger_key TEXT NOT NULL, op TEXT NOT NULL, row_data JSONB NOT NULL, queued_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
  // An index is made in its table's schema: its name is not qualified here.
  `CREATE INDEX IF NOT EXISTS ${quoteIdent(`${QUEUE_TABLE}_key`)} ON ${queueTable(schema)} (trigger_key, id)`,
  `CREATE OR REPLACE FUNCTION ${qualified(schema, functionName(key))}() RETURNS trigger LANGUAGE plpgsql
   SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS ${dollarQuoted(`
     BEGIN
       INSERT INTO ${queueTable(schema)} (trigger_key, op, row_data) VALUES (${quoteString(key)}, TG_OP, to_jsonb(NEW));
       RETURN NEW;
     END
   `)}`,
  `CREATE TRIGGER ${quoteIdent(functionName(key))} AFTER INSERT OR UPDATE${
    columns && columns.length > 0 ? ` OF ${columns.map(quoteIdent).join(', ')}` : ''
  } ON ${qualified(schema, table)} FOR EACH ROW EXECUTE FUNCTION ${qualified(schema, functionName(key))}()`,
];

/**
 * The trigger, its function and its queue rows; then the queue table itself (its index and sequence
 * with it) when no trigger function of ours is left in the schema.
 */
export const uninstallStatements = (key: string, schema: string, table: string): string[] => [
  schemaLock(schema),
  `DROP TRIGGER IF EXISTS ${quoteIdent(functionName(key))} ON ${qualified(schema, table)}`,
  `DROP FUNCTION IF EXISTS ${qualified(schema, functionName(key))}()`,
  `DO ${dollarQuoted(`
     BEGIN
       IF to_regclass(${quoteString(queueTable(schema))}) IS NULL THEN
         RETURN;
       END IF;
       DELETE FROM ${queueTable(schema)} WHERE trigger_key = ${quoteString(key)};
       IF NOT EXISTS (
         SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = ${quoteString(schema)}
            AND p.prorettype = 'pg_catalog.trigger'::pg_catalog.regtype
            AND pg_catalog.starts_with(p.proname, ${quoteString(FUNCTION_PREFIX)})
       ) THEN
         DROP TABLE ${queueTable(schema)};
       END IF;
     END
   `)}`,
];

/** The queue rows of a trigger after `$2`, oldest first: [id, row as JSON]; `$1` is its key. */
export const queueQuery = (schema: string, limit: number) =>
  `SELECT id, row_data::text FROM ${queueTable(schema)} WHERE trigger_key = $1 AND id > $2 ORDER BY id LIMIT ${limit}`;

/** Removes a trigger's (`$1`) queue rows up to `$2`, once fired. */
export const dequeueStatement = (schema: string) =>
  `DELETE FROM ${queueTable(schema)} WHERE trigger_key = $1 AND id <= $2`;

/**
 * A string as our MySQL dialect reads it back unaltered: a backslash is an escape there
 * (`src/sql/lexical.ts`), so it is doubled, as a quote is.
 */
const mysqlString = (value: string) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

const sqlLiteral = (v: unknown) =>
  v === null || v === undefined
    ? 'NULL'
    : typeof v === 'number'
      ? String(v)
      : typeof v === 'boolean'
        ? v
          ? 'TRUE'
          : 'FALSE'
        : mysqlString(typeof v === 'string' ? v : JSON.stringify(v));

/** A statement (MindsDB's dialect) with each TABLE_DELTA read as the rows of a firing. */
export const withDelta = (statement: string, rows: Record<string, unknown>[]): string => {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const values = rows.map((r) => `(${columns.map((c) => sqlLiteral(r[c])).join(', ')})`).join(', ');
  const delta = `(SELECT * FROM (VALUES ${values}) AS table_delta(${columns.map(quoteMysqlIdent).join(', ')}))`;
  const tokens = tokenize(statement, 'mysql');
  const text = (t: Token | undefined) => (t ? statement.slice(t.start, t.end) : '');
  const isDelta = (t: Token | undefined) => t?.kind === 'word' && text(t).toUpperCase() === 'TABLE_DELTA';
  /** The token after `i` that is not blank or a comment. */
  const next = (i: number) => {
    let j = i + 1;
    while (tokens[j]?.kind === 'blank' || tokens[j]?.kind === 'comment') j++;
    return j;
  };
  /** A name that may alias a table: a word that is no clause's, or a quoted identifier. */
  const aliasAt = (j: number) => isRelationName(statement, tokens[j]);
  return tokens
    .map((t, i) => {
      if (!isDelta(t) || text(tokens[i - 1]) === '.') return text(t);
      const after = next(i);
      // `TABLE_DELTA.col`: a qualifier, the name the rows go by.
      if (text(tokens[after]) === '.') return 'table_delta';
      // Each TABLE_DELTA becomes the rows, keeping an alias it is given (else aliased table_delta).
      const aliased =
        tokens[after]?.kind === 'word' && text(tokens[after]).toUpperCase() === 'AS'
          ? aliasAt(next(after))
          : aliasAt(after);
      return aliased ? delta : `${delta} AS table_delta`;
    })
    .join('');
};
