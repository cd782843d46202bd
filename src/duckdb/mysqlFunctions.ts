/**
 * MySQL's date functions that DuckDB does not have, as macros on every reader connection: SQL tools
 * and MindsDB users write `DATE_FORMAT(d, '%Y-%m')`, `CURDATE()`, `UNIX_TIMESTAMP()`. Temporary
 * macros live in the connection, not in the database file, so the read model (and its digest)
 * holds nothing of them.
 *
 * DuckDB's strftime and strptime require a constant format and a macro cannot rewrite one, so the
 * SQL layer translates a format literal into DuckDB's specifiers in the statement's text
 * (src/sql/mysqlFormats.ts) and these macros pass it through.
 */
const fromEpochSeconds = (n: string) =>
  `make_timestamp(CAST(round(CAST(${n} AS DOUBLE) * 1000000) AS BIGINT))`;

export const MYSQL_FUNCTION_MACROS: readonly string[] = [
  'CREATE OR REPLACE TEMP MACRO date_format(d, f) AS strftime(CAST(d AS TIMESTAMP), f)',
  "CREATE OR REPLACE TEMP MACRO time_format(t, f) AS strftime(CAST(DATE '2000-01-01' + CAST(t AS TIME) AS TIMESTAMP), f)",
  'CREATE OR REPLACE TEMP MACRO str_to_date(s, f) AS strptime(s, f)',
  'CREATE OR REPLACE TEMP MACRO curdate() AS current_date',
  'CREATE OR REPLACE TEMP MACRO curtime() AS CAST(current_localtimestamp() AS TIME)',
  'CREATE OR REPLACE TEMP MACRO utc_timestamp() AS CAST(current_localtimestamp() AS TIMESTAMP)',
  `CREATE OR REPLACE TEMP MACRO unix_timestamp() AS CAST(floor(epoch(current_localtimestamp())) AS BIGINT),
     (d) AS CAST(floor(epoch(CAST(d AS TIMESTAMP))) AS BIGINT)`,
  `CREATE OR REPLACE TEMP MACRO from_unixtime(n) AS ${fromEpochSeconds('n')},
     (n, f) AS strftime(${fromEpochSeconds('n')}, f)`,
];
