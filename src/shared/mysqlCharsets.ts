/**
 * The character sets and collations this server names, as MariaDB (10.11) lists them, in its
 * columns: the MySQL door's SHOW CHARSET/COLLATION (src/mysql/session/answers/server.ts) and the
 * engine's (src/sql/mysqlCompat.ts) answer with one list. Kept apart from both so that the engine
 * does not import the door. Tools ask on connect (DBeaver: SHOW COLLATION LIKE
 * 'utf8mb4_general_ci'). Text is stored and compared as DuckDB does whatever a column's collation
 * says, so these name what the session's variables name (utf8mb4, utf8mb4_general_ci), plus MySQL
 * 8's default collation, which information_schema.SCHEMATA names.
 */

export const COLLATION_COLUMNS = ['Collation', 'Charset', 'Id', 'Default', 'Compiled', 'Sortlen'];
export const COLLATIONS: (string | number)[][] = [
  ['utf8mb3_general_ci', 'utf8mb3', 33, 'Yes', 'Yes', 1],
  ['utf8mb4_general_ci', 'utf8mb4', 45, 'Yes', 'Yes', 1],
  ['utf8mb4_bin', 'utf8mb4', 46, '', 'Yes', 1],
  ['binary', 'binary', 63, 'Yes', 'Yes', 1],
  ['utf8mb4_unicode_ci', 'utf8mb4', 224, '', 'Yes', 8],
  ['utf8mb4_0900_ai_ci', 'utf8mb4', 255, '', 'Yes', 0],
];

export const CHARSET_COLUMNS = ['Charset', 'Description', 'Default collation', 'Maxlen'];
export const CHARSETS: (string | number)[][] = [
  ['utf8mb3', 'UTF-8 Unicode', 'utf8mb3_general_ci', 3],
  ['utf8mb4', 'UTF-8 Unicode', 'utf8mb4_general_ci', 4],
  ['binary', 'Binary pseudo charset', 'binary', 1],
];
