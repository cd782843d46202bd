import { quoteMysqlIdent } from '../../shared/quoting';
import { outsideNativeQueries, significant, textOf, unquoted, type Token } from '../../shared/sqlTokens';
import { clientTokens } from './clientText';

/**
 * information_schema tables MySQL tools read when they connect or open a schema (DBeaver's
 * routines, keys and constraints) that MindsDB's catalog does not have: with MariaDB's columns
 * (10.11, in order) and no rows, since nothing here has routines, keys, constraints or indexes
 * (SHOW INDEX answers none either). A SELECT naming one reads a derived table of those columns
 * instead, written into its text, so its WHERE, JOIN and ORDER BY mean what they mean over any
 * table, and the engine still plans (and checks) the rest of the statement. MindsDB's own tables of
 * the same names (EVENTS, TRIGGERS, VIEWS) are left to the catalog.
 */
const MARIADB_COLUMNS: Record<string, string> = {
  ROUTINES:
    'SPECIFIC_NAME varchar, ROUTINE_CATALOG varchar, ROUTINE_SCHEMA varchar, ROUTINE_NAME varchar, ROUTINE_TYPE varchar, DATA_TYPE varchar, CHARACTER_MAXIMUM_LENGTH int, CHARACTER_OCTET_LENGTH int, NUMERIC_PRECISION int, NUMERIC_SCALE int, DATETIME_PRECISION bigint, CHARACTER_SET_NAME varchar, COLLATION_NAME varchar, DTD_IDENTIFIER longtext, ROUTINE_BODY varchar, ROUTINE_DEFINITION longtext, EXTERNAL_NAME varchar, EXTERNAL_LANGUAGE varchar, PARAMETER_STYLE varchar, IS_DETERMINISTIC varchar, SQL_DATA_ACCESS varchar, SQL_PATH varchar, SECURITY_TYPE varchar, CREATED datetime, LAST_ALTERED datetime, SQL_MODE varchar, ROUTINE_COMMENT longtext, DEFINER varchar, CHARACTER_SET_CLIENT varchar, COLLATION_CONNECTION varchar, DATABASE_COLLATION varchar',
  PARAMETERS:
    'SPECIFIC_CATALOG varchar, SPECIFIC_SCHEMA varchar, SPECIFIC_NAME varchar, ORDINAL_POSITION int, PARAMETER_MODE varchar, PARAMETER_NAME varchar, DATA_TYPE varchar, CHARACTER_MAXIMUM_LENGTH int, CHARACTER_OCTET_LENGTH int, NUMERIC_PRECISION int, NUMERIC_SCALE int, DATETIME_PRECISION bigint, CHARACTER_SET_NAME varchar, COLLATION_NAME varchar, DTD_IDENTIFIER longtext, ROUTINE_TYPE varchar',
  KEY_COLUMN_USAGE:
    'CONSTRAINT_CATALOG varchar, CONSTRAINT_SCHEMA varchar, CONSTRAINT_NAME varchar, TABLE_CATALOG varchar, TABLE_SCHEMA varchar, TABLE_NAME varchar, COLUMN_NAME varchar, ORDINAL_POSITION bigint, POSITION_IN_UNIQUE_CONSTRAINT bigint, REFERENCED_TABLE_SCHEMA varchar, REFERENCED_TABLE_NAME varchar, REFERENCED_COLUMN_NAME varchar',
  REFERENTIAL_CONSTRAINTS:
    'CONSTRAINT_CATALOG varchar, CONSTRAINT_SCHEMA varchar, CONSTRAINT_NAME varchar, UNIQUE_CONSTRAINT_CATALOG varchar, UNIQUE_CONSTRAINT_SCHEMA varchar, UNIQUE_CONSTRAINT_NAME varchar, MATCH_OPTION varchar, UPDATE_RULE varchar, DELETE_RULE varchar, TABLE_NAME varchar, REFERENCED_TABLE_NAME varchar',
  TABLE_CONSTRAINTS:
    'CONSTRAINT_CATALOG varchar, CONSTRAINT_SCHEMA varchar, CONSTRAINT_NAME varchar, TABLE_SCHEMA varchar, TABLE_NAME varchar, CONSTRAINT_TYPE varchar',
  CHECK_CONSTRAINTS:
    'CONSTRAINT_CATALOG varchar, CONSTRAINT_SCHEMA varchar, TABLE_NAME varchar, CONSTRAINT_NAME varchar, LEVEL varchar, CHECK_CLAUSE longtext',
  STATISTICS:
    'TABLE_CATALOG varchar, TABLE_SCHEMA varchar, TABLE_NAME varchar, NON_UNIQUE bigint, INDEX_SCHEMA varchar, INDEX_NAME varchar, SEQ_IN_INDEX int, COLUMN_NAME varchar, COLLATION varchar, CARDINALITY bigint, SUB_PART bigint, PACKED varchar, NULLABLE varchar, INDEX_TYPE varchar, COMMENT varchar, INDEX_COMMENT varchar, IGNORED varchar',
};

/** MariaDB's column types as the engine's (MySQL dialect) casts name them. */
const CAST_TYPES: Record<string, string> = {
  varchar: 'CHAR',
  longtext: 'CHAR',
  int: 'INT',
  bigint: 'BIGINT',
  datetime: 'DATETIME',
};

/** Each table's empty derived table: `(SELECT CAST(NULL AS CHAR) AS `SPECIFIC_NAME`, … LIMIT 0)`. */
const DERIVED: ReadonlyMap<string, string> = new Map(
  Object.entries(MARIADB_COLUMNS).map(([table, columns]) => {
    const items = columns.split(', ').map((c) => {
      const [name, type] = c.split(' ');
      return `CAST(NULL AS ${CAST_TYPES[type!]!}) AS ${quoteMysqlIdent(name!)}`;
    });
    return [table, `(SELECT ${items.join(', ')} LIMIT 0)`];
  }),
);

/** The tables' names, for a glance at a text before it is tokenized. */
export const MYSQL_ONLY_TABLES = [...DERIVED.keys()];
const MENTIONS = new RegExp(`(${MYSQL_ONLY_TABLES.join('|')})`, 'i');

/** Words that may follow a table reference and are not its alias (clauses, joins, index hints). */
const AFTER_TABLE = new Set([
  'WHERE',
  'JOIN',
  'INNER',
  'LEFT',
  'RIGHT',
  'CROSS',
  'NATURAL',
  'STRAIGHT_JOIN',
  'FULL',
  'OUTER',
  'ON',
  'USING',
  'GROUP',
  'ORDER',
  'LIMIT',
  'OFFSET',
  'FETCH',
  'HAVING',
  'WINDOW',
  'QUALIFY',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'MINUS',
  'FOR',
  'LOCK',
  'INTO',
  'USE',
  'IGNORE',
  'FORCE',
  'PARTITION',
]);

/** Words a bare table name follows. */
const FROM_OR_JOIN = new Set(['FROM', 'JOIN', 'STRAIGHT_JOIN']);

/** Statements that read tables and may name one (INSERT … SELECT and the like stay as they are). */
const QUERY_START = new Set(['SELECT', 'WITH', 'TABLE']);

const nameOf = (sql: string, t: Token | undefined) =>
  t?.kind === 'word' ? textOf(sql, t) : t?.kind === 'identifier' ? unquoted(sql, t) : undefined;

const isSymbol = (sql: string, t: Token | undefined, symbol: string) =>
  t?.kind === 'symbol' && sql[t.start] === symbol;

const isWordIn = (sql: string, t: Token | undefined, words: ReadonlySet<string>) =>
  t?.kind === 'word' && words.has(textOf(sql, t).toUpperCase());

/**
 * A SELECT with every reference to one of these tables made a reference to its empty derived
 * table: `information_schema.ROUTINES [AS] r` and, while information_schema is the database in use,
 * `FROM ROUTINES` / `JOIN ROUTINES`. Without an alias of its own the derived table is named as the
 * table was (so `ROUTINES.ROUTINE_NAME` still reads it); a column named with its table's full name
 * (`information_schema.ROUTINES.ROUTINE_NAME`) loses the database part. Any other text is returned
 * as it came.
 */
export const writeInMysqlOnlyTables = (sql: string, database: string): string => {
  if (!MENTIONS.test(sql)) return sql;
  const tokens = clientTokens(sql);
  if (!tokens) return sql;
  const t = outsideNativeQueries(sql, significant(tokens));
  let start = 0;
  while (isSymbol(sql, t[start], '(')) start++;
  if (!isWordIn(sql, t[start], QUERY_START)) return sql;
  const inInformationSchema = database.toLowerCase() === 'information_schema';
  const replacements: { start: number; end: number; text: string }[] = [];
  for (let i = start; i < t.length; i++) {
    const table = nameOf(sql, t[i])?.toUpperCase();
    const derived = table === undefined ? undefined : DERIVED.get(table);
    if (!derived) continue;
    let from: number;
    if (isSymbol(sql, t[i - 1], '.')) {
      // `information_schema.X`, and not `a.information_schema.X` nor `t.X` of another database.
      if (nameOf(sql, t[i - 2])?.toLowerCase() !== 'information_schema' || isSymbol(sql, t[i - 3], '.'))
        continue;
      from = i - 2;
    } else if (inInformationSchema && isWordIn(sql, t[i - 1], FROM_OR_JOIN)) from = i;
    else continue;
    const next = t[i + 1];
    if (isSymbol(sql, next, '.')) {
      // A column named with its table (`information_schema.ROUTINES.ROUTINE_NAME`): the table's name alone.
      if (from !== i) replacements.push({ start: t[from]!.start, end: t[i]!.start, text: '' });
      continue;
    }
    const aliased =
      next !== undefined &&
      (next.kind === 'identifier' ||
        next.kind === 'dquoted' ||
        (next.kind === 'word' && !isWordIn(sql, next, AFTER_TABLE)));
    replacements.push({
      start: t[from]!.start,
      end: t[i]!.end,
      text: aliased ? derived : `${derived} AS ${quoteMysqlIdent(nameOf(sql, t[i])!)}`,
    });
  }
  if (replacements.length === 0) return sql;
  let out = '';
  let at = 0;
  for (const r of replacements) {
    out += sql.slice(at, r.start) + r.text;
    at = r.end;
  }
  return out + sql.slice(at);
};
