/** What a select-list item of a connection-level SELECT reads. */
export type ConnectionExpression =
  | { kind: 'variable'; name: string }
  | { kind: 'function'; name: ConnectionFunction }
  | { kind: 'literal'; value: string | number | null };

export type SelectItem = { expression: ConnectionExpression; name: string };

export type Assignment =
  | { kind: 'system'; name: string; valueText: string }
  | { kind: 'user'; name: string; valueText: string }
  | { kind: 'names'; charset: string; collation: string | undefined }
  | { kind: 'other' };

/** A statement the MySQL connection answers (or helps answer) itself; `engine` is everything else. */
export type Statement =
  | { kind: 'connectionSelect'; items: SelectItem[]; noRows: boolean }
  | { kind: 'set'; assignments: { text: string; assignment: Assignment }[] }
  | { kind: 'showVariables'; like: string | undefined; where: string | undefined }
  | {
      kind: 'showColumns';
      full: boolean;
      table: string;
      db: string | undefined;
      like: string | undefined;
      where: string | undefined;
    }
  | { kind: 'showCreateTable'; table: string; db: string | undefined }
  | { kind: 'showCreateDatabase'; db: string; ifNotExists: boolean }
  | { kind: 'showIndex'; table: string; db: string | undefined }
  | { kind: 'showTableStatus'; db: string | undefined; like: string | undefined; where: string | undefined }
  | { kind: 'showWarnings'; errorsOnly: boolean; count: boolean }
  | { kind: 'showProcesslist'; full: boolean }
  | { kind: 'showCollation'; like: string | undefined; where: string | undefined }
  | { kind: 'showCharset'; like: string | undefined; where: string | undefined }
  | { kind: 'showPlugins' }
  /** Without an account: the connection's own (FOR CURRENT_USER too). */
  | { kind: 'showGrants'; account: { user: string; host: string } | undefined }
  | { kind: 'kill'; scope: 'query' | 'connection'; id: number }
  | { kind: 'transaction' }
  | { kind: 'engine'; sql: string };

/** A statement the connection answers itself. */
export type LocalStatement = Exclude<Statement, { kind: 'engine' }>;

/** MySQL's functions of the connection, which the engine does not know (or answers as DuckDB). */
const CONNECTION_FUNCTIONS = [
  'DATABASE',
  'SCHEMA',
  'USER',
  'CURRENT_USER',
  'SESSION_USER',
  'SYSTEM_USER',
  'CONNECTION_ID',
  'VERSION',
  'LAST_INSERT_ID',
  'FOUND_ROWS',
  'ROW_COUNT',
] as const;
export type ConnectionFunction = (typeof CONNECTION_FUNCTIONS)[number];

export const asConnectionFunction = (word: string): ConnectionFunction | undefined =>
  CONNECTION_FUNCTIONS.find((f) => f === word.toUpperCase());

const CONNECTION_WORDS = new RegExp(`@@|\\b(${CONNECTION_FUNCTIONS.join('|')})\\b`, 'i');

/** Whether a text may read a value of the connection (`@@x`, DATABASE(), …): it must then be tokenized. */
export const mayReadConnection = (sql: string) => CONNECTION_WORDS.test(sql);
