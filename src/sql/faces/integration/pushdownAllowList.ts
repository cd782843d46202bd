import { SqlError, SqlErrorCode } from '../../errors';
import {
  SqlSyntaxError,
  significant,
  textOf,
  tokenize,
  unquoted,
  type Token,
} from '../../../shared/sqlTokens';

/**
 * What a caller who may not write (analyst, auditor, a project-scoped token: `readOnlyRole` of
 * their `TablePolicy`, src/sql/statements/roles.ts) may have an external database run for them. A pushed-down
 * query runs there whole, with the database's stored credentials, so its functions are that
 * engine's: `pg_read_file`, `lo_import`, `set_config`, `pg_terminate_backend`, MariaDB's
 * `LOAD_FILE`, `@@datadir` would read files, write, or reach the server's configuration.
 *
 * The rule: only the functions listed here, per engine, are pushed down for such a caller:
 * ordinary scalar and aggregate functions (arithmetic, string, date/time, conditional, casts,
 * aggregates and window functions). Anything else is refused before the database is asked (a
 * `SqlError` 1227 naming the function); editors and admins push down everything.
 *
 * The check reads the text exactly as it is sent, with the remote engine's lexical rules (not
 * DuckDB's parse tree, which reads some texts otherwise: MariaDB runs `/*! … *\/` comments and
 * reads `--x` as two minus signs, both comments to DuckDB; PostgreSQL's `E'\''` escapes a quote
 * DuckDB's strings do not). Every name followed by `(` must be a listed function or a word of
 * the grammar; what the two readings could disagree on (comments, backslashes in strings, `$`
 * quoting, `@` variables, schema-qualified calls, `INTO`) is refused outright. Behind this list
 * the statement still runs in a read-only transaction under a time limit (src/integrations/drivers.ts
 * `readOnlyQuery`), so a function that slipped through cannot write. *
 * What such a caller names there is held too (`checkReadOnlyRelation`, below): only relations of
 * the database and schema it was registered with, never the server's catalogs (password hashes,
 * other sessions' SQL) or another database. That check reads the names DuckDB parsed (each table
 * reference's `TablePolicy.check`, src/sql/statements/roles.ts `withRegisteredRelations`).
 */

/** Names separated by blanks, `#` comments to the end of a line left out. */
const words = (text: string) =>
  text
    .replace(/#[^\n]*/g, '')
    .split(/\s+/)
    .filter(Boolean);

/** Functions of any engine a read-only caller may push down (compared in lower case). */
const COMMON = words(`
  # aggregates and window functions
  count sum avg min max stddev stddev_pop stddev_samp variance var_pop var_samp bit_and bit_or
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  grouping
  # arithmetic
  abs ceil ceiling floor round mod power pow sqrt exp ln log log10 sign pi degrees radians sin cos
  tan cot asin acos atan atan2 greatest least
  # strings
  lower upper length char_length character_length octet_length bit_length substr substring position
  trim ltrim rtrim lpad rpad replace concat concat_ws left right reverse repeat ascii md5
  regexp_replace
  # dates and times
  now extract date current_date current_time current_timestamp localtime localtimestamp
  # conditionals and casts
  coalesce nullif cast
`);

/** Per engine, besides `COMMON`. */
const ENGINE_FUNCTIONS: Record<'postgres' | 'mysql', readonly string[]> = {
  postgres: words(`
    string_agg array_agg bool_and bool_or every percentile_cont percentile_disc mode corr covar_pop
    covar_samp trunc div cbrt width_bucket btrim strpos split_part initcap translate starts_with
    chr format to_char to_number to_date to_timestamp date_trunc date_part age make_date make_time
    make_timestamp make_interval justify_days justify_hours justify_interval isfinite array_length
    cardinality unnest overlay
  `),
  mysql: words(`
    group_concat std bit_xor truncate log2 rand lcase ucase mid substring_index locate instr space
    char ord field find_in_set format hex unhex strcmp regexp_substr regexp_instr time timestamp
    year month day dayofmonth dayofweek dayofyear week weekday quarter hour minute second
    microsecond last_day curdate curtime utc_date utc_time utc_timestamp sysdate date_add date_sub
    adddate subdate addtime subtime datediff timediff timestampdiff timestampadd date_format
    str_to_date from_unixtime unix_timestamp makedate maketime monthname dayname to_days from_days
    convert ifnull if isnull
  `),
};

/** Words of the grammar a `(` may follow (keywords, and type names with a length or precision). */
const GRAMMAR = new Set(
  words(`
    select from where and or not xor in exists as on join using values any all some array row
    interval lateral case when then else end by having union except intersect with recursive is
    like ilike similar to regexp rlike between limit offset distinct over filter within group sets
    cube rollup escape div overlaps varchar character varying numeric decimal dec float bit binary
    varbinary datetime
  `),
);

/** Functions an engine calls without parentheses (`current_user` answers the stored user's name). */
const BARE_FUNCTIONS: Record<'postgres' | 'mysql', ReadonlySet<string>> = {
  postgres: new Set([
    'current_user',
    'session_user',
    'user',
    'current_role',
    'current_schema',
    'current_catalog',
    'system_user',
  ]),
  mysql: new Set(['current_user', 'current_role']),
};

/** `postgres`, or `mysql` for MySQL and MariaDB. */
const family = (engine: string): 'postgres' | 'mysql' => (engine === 'postgres' ? 'postgres' : 'mysql');

const allowed: Record<'postgres' | 'mysql', ReadonlySet<string>> = {
  postgres: new Set([...COMMON, ...ENGINE_FUNCTIONS.postgres]),
  mysql: new Set([...COMMON, ...ENGINE_FUNCTIONS.mysql]),
};

const refusal = (role: string, what: string, integration: string) =>
  new SqlError(
    SqlErrorCode.Forbidden,
    `${role} role: ${what} is not pushed down to ${integration} (a read-only role pushes down only ordinary scalar and aggregate functions: arithmetic, string, date/time, casts, count/sum/avg/min/max, coalesce, …; the editor and admin roles push down everything)`,
  );

const wordIs = (sql: string, t: Token | undefined, ...words: string[]) =>
  t?.kind === 'word' && words.includes(textOf(sql, t).toLowerCase());
const symbolIs = (sql: string, t: Token | undefined, symbol: string) =>
  t?.kind === 'symbol' && sql[t.start] === symbol;

/**
 * Where a name followed by `(` does not call a function: an alias's columns (`AS x(a, b)`), a
 * CTE's (`WITH c(a, b) AS (SELECT …`: names and commas only, then a query).
 */
const namesColumns = (sql: string, tokens: readonly Token[], k: number) => {
  if (wordIs(sql, tokens[k - 1], 'as')) return true;
  if (!wordIs(sql, tokens[k - 1], 'with', 'recursive') && !symbolIs(sql, tokens[k - 1], ',')) return false;
  let j = k + 2;
  while (
    (tokens[j]?.kind === 'word' || tokens[j]?.kind === 'identifier') &&
    (symbolIs(sql, tokens[j + 1], ',') || symbolIs(sql, tokens[j + 1], ')'))
  ) {
    j += 2;
    if (symbolIs(sql, tokens[j - 1], ')')) break;
  }
  if (!symbolIs(sql, tokens[j - 1], ')')) return false;
  return (
    wordIs(sql, tokens[j], 'as') &&
    symbolIs(sql, tokens[j + 1], '(') &&
    (wordIs(sql, tokens[j + 2], 'select', 'with', 'values') || symbolIs(sql, tokens[j + 2], '('))
  );
};

/**
 * Throws unless every function `text` (the statement as the database receives it, placeholders
 * `?`) calls is on the engine's list, and nothing in it could read otherwise there than here.
 */
export const checkReadOnlyPushdown = (text: string, engine: string, integration: string, role: string) => {
  const kind = family(engine);
  let all: readonly Token[];
  try {
    all = tokenize(text, kind === 'mysql' ? 'mysql-client' : 'duckdb');
  } catch (error) {
    if (error instanceof SqlSyntaxError) throw refusal(role, 'an unterminated quote', integration);
    throw error;
  }
  if (all.some((t) => t.kind === 'comment')) throw refusal(role, 'a comment', integration);
  const tokens = significant(all);
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    const raw = textOf(text, t);
    if (t.kind === 'systemVariable') throw refusal(role, `system variable ${raw}`, integration);
    if (t.kind === 'userVariable') throw refusal(role, `variable ${raw}`, integration);
    if (t.kind === 'string' && raw.includes('\\'))
      throw refusal(role, 'a string with a backslash', integration);
    // `$1` is a bound parameter (src/sql/faces/integration/federation.ts `positional`); any other `$` opens dollar quoting.
    const parameter =
      raw === '$' && tokens[k + 1]?.start === t.end && /^\d+$/.test(textOf(text, tokens[k + 1]!));
    if (kind === 'postgres' && (t.kind === 'placeholder' || raw === '$') && !parameter)
      throw refusal(role, '$ quoting', integration);
    const name =
      t.kind === 'word'
        ? raw.toLowerCase()
        : t.kind === 'identifier' || t.kind === 'dquoted'
          ? unquoted(text, t).toLowerCase()
          : null;
    if (name === null) continue;
    const afterDot = tokens[k - 1]?.kind === 'symbol' && text[tokens[k - 1]!.start] === '.';
    const next = tokens[k + 1];
    const calls = next?.kind === 'symbol' && text[next.start] === '(';
    if (t.kind === 'word' && name === 'into') throw refusal(role, 'INTO', integration);
    if (!calls) {
      if (t.kind === 'word' && !afterDot && BARE_FUNCTIONS[kind].has(name))
        throw refusal(role, `function ${raw}`, integration);
      continue;
    }
    if (afterDot) throw refusal(role, `schema-qualified function ${raw}()`, integration);
    if (t.kind === 'word' && GRAMMAR.has(name)) continue;
    if (allowed[kind].has(name) || namesColumns(text, tokens, k)) continue;
    throw refusal(role, `function ${raw}()`, integration);
  }
};

/**
 * Where a registered external database's relations live: its engine, the database its connection
 * names, and for PostgreSQL the schema (`schema`, default `public`: the connection's search_path).
 */
export type Registration = { engine: string; database: string | null; schema: string | null };

/** Schemas (MySQL, MariaDB: databases) holding the server's own catalogs, users and sessions. */
const SYSTEM_SCHEMAS: Record<'postgres' | 'mysql', (name: string) => boolean> = {
  // PostgreSQL reserves every `pg_` schema name (pg_catalog, pg_toast, pg_temp_3, …).
  postgres: (name) => name.startsWith('pg_') || name === 'information_schema',
  mysql: (name) => ['mysql', 'information_schema', 'performance_schema', 'sys'].includes(name),
};

/** The registered schema (PostgreSQL) or database (MySQL, MariaDB) qualifiers must name. */
const registeredNamespace = (kind: 'postgres' | 'mysql', r: Registration) =>
  kind === 'postgres' ? (r.schema ?? 'public') : r.database;

const onlyRegistered = (kind: 'postgres' | 'mysql', r: Registration) =>
  kind === 'postgres'
    ? `only relations of its registered database ${r.database ?? '(the user’s default)'}, schema ${registeredNamespace(kind, r)}, may be read`
    : r.database === null
      ? 'it was registered without a database, so no relation named with one may be read'
      : `only relations of its registered database ${r.database} may be read`;

const relationRefusal = (role: string, relation: string, integration: string, why: string) =>
  new SqlError(SqlErrorCode.Forbidden, `${role} role: ${relation} is not read on ${integration}: ${why}`);

/**
 * Throws unless the relation `schema.table` (schema null: the bare name) of the registered
 * database `integration` names a relation of the registered database (and schema) only, for a
 * caller who may not write. The server runs the query with the stored credentials, so a name
 * could otherwise reach the server's own catalogs (PostgreSQL's `pg_catalog.pg_authid`, its
 * password hashes; `pg_stat_activity`, other sessions' SQL; MariaDB's `mysql.user`,
 * `information_schema.processlist`) or another database on the same server.
 *
 * - A qualified name must be qualified by the registered schema (PostgreSQL) or database (MySQL,
 *   MariaDB), spelled as registered; a server's system schemas are refused even when registered.
 * - A bare name is read where the connection is: MySQL and MariaDB read it in the registered
 *   database; PostgreSQL looks it up in `pg_catalog` before the search_path (the registered
 *   schema), so a bare `pg_` name (every relation of pg_catalog is one) is refused there.
 */
export const checkReadOnlyRelation = (
  registration: Registration,
  integration: string,
  schema: string | null,
  table: string,
  role: string,
) => {
  const kind = family(registration.engine);
  const namespace = registeredNamespace(kind, registration);
  const relation = schema === null ? table : `${schema}.${table}`;
  const system = SYSTEM_SCHEMAS[kind];
  if (namespace !== null && system(namespace.toLowerCase()))
    throw relationRefusal(
      role,
      relation,
      integration,
      `its registered ${kind === 'postgres' ? 'schema' : 'database'} ${namespace} is the server's own catalog`,
    );
  if (schema !== null) {
    if (schema === namespace) return;
    throw relationRefusal(
      role,
      relation,
      integration,
      system(schema.toLowerCase())
        ? `${schema} is the server's own catalog; ${onlyRegistered(kind, registration)}`
        : onlyRegistered(kind, registration),
    );
  }
  if (kind === 'postgres' && table.toLowerCase().startsWith('pg_'))
    throw relationRefusal(
      role,
      relation,
      integration,
      `PostgreSQL reads a bare pg_ name in its own catalog pg_catalog first; ${onlyRegistered(kind, registration)}`,
    );
};
