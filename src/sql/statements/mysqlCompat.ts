import { CHARSET_COLUMNS, CHARSETS, COLLATION_COLUMNS, COLLATIONS } from '../../shared/mysqlCharsets';
import { VERSION } from '../../shared/version';
import type { TableAnswer } from '../answers';

const table = (columns: string[], rows: unknown[][]): TableAnswer => ({
  type: 'table',
  column_names: columns,
  column_types: columns.map(() => 'VARCHAR'),
  data: rows,
});

/** The answers MySQL clients (and MindsDB's GUI) ask for when they connect; none touches DuckDB. */
export const mysqlCompatAnswers: Record<string, () => TableAnswer> = {
  VARIABLES: () =>
    table(
      ['Variable_name', 'Value'],
      [
        ['autocommit', 'ON'],
        ['character_set_client', 'utf8mb4'],
        ['character_set_connection', 'utf8mb4'],
        ['character_set_results', 'utf8mb4'],
        ['character_set_server', 'utf8mb4'],
        ['collation_connection', 'utf8mb4_0900_ai_ci'],
        ['collation_server', 'utf8mb4_0900_ai_ci'],
        ['lower_case_table_names', '1'],
        ['max_allowed_packet', '16777216'],
        ['sql_mode', 'ANSI_QUOTES'],
        ['time_zone', 'UTC'],
        ['version', `8.0.17-mindledger-${VERSION}`],
        ['version_comment', 'mindledger (MindsDB-compatible)'],
      ],
    ),
  STATUS: () =>
    table(
      ['Variable_name', 'Value'],
      [
        ['Uptime', String(Math.round(process.uptime()))],
        ['Threads_connected', '1'],
      ],
    ),
  ENGINES: () =>
    table(
      ['Engine', 'Support', 'Comment', 'Transactions', 'XA', 'Savepoints'],
      [['InnoDB', 'DEFAULT', 'Projections in DuckDB over an event log', 'YES', 'NO', 'NO']],
    ),
  // The MySQL door's rows (over HTTP too, with LIKE and WHERE, the door's code answers these first).
  CHARSET: () => table(CHARSET_COLUMNS, CHARSETS),
  COLLATION: () => table(COLLATION_COLUMNS, COLLATIONS),
  WARNINGS: () => table(['Level', 'Code', 'Message'], []),
  ERRORS: () => table(['Level', 'Code', 'Message'], []),
  'FUNCTION STATUS': () => table(routineColumns, []),
  'PROCEDURE STATUS': () => table(routineColumns, []),
};

const routineColumns = [
  'Db',
  'Name',
  'Type',
  'Definer',
  'Modified',
  'Created',
  'Security_type',
  'Comment',
  'character_set_client',
  'collation_connection',
  'Database Collation',
];

/** Session variables MySQL clients set on connect; accepted and ignored (the server keeps no session). */
export const isClientSessionVariable = (name: string) =>
  /^(names|character[_ ]set.*|charset|autocommit|sql_mode|time_zone|session_track.*|transaction.*|tx_.*|net_.*|wait_timeout|interactive_timeout|sql_.*|.*_timeout|profiling|show_secrets|active|foreign_key_checks|unique_checks)$/i.test(
    name,
  );
