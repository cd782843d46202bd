import type { ErrorAnswer, SqlAnswer, StreamAnswer } from '../doorway/engine';

/** What one statement answers, as the connection writes it: a table (rows possibly streamed), OK, or an error. */
export type TableOutcome = {
  type: 'table';
  column_names: string[];
  column_types: string[];
  rows: AsyncIterable<unknown[][]> | unknown[][];
  /** Read once the rows are written: whether the engine cut the result at its limit. */
  truncated: () => boolean;
};
export type OkOutcome = { type: 'ok'; affectedRows: number; info?: string };
export type Outcome = TableOutcome | OkOutcome | ErrorAnswer;

export const table = (column_names: string[], column_types: string[], data: unknown[][]): TableOutcome => ({
  type: 'table',
  column_names,
  column_types,
  rows: data,
  truncated: () => false,
});

/** A table of text columns. */
export const textTable = (column_names: string[], data: unknown[][]) =>
  table(
    column_names,
    column_names.map(() => 'VARCHAR'),
    data,
  );

export const fail = (error_code: number, error_message: string): ErrorAnswer => ({
  type: 'error',
  error_code,
  error_message,
});

export const ok = (affectedRows = 0): OkOutcome => ({ type: 'ok', affectedRows });

export const fromAnswer = (answer: SqlAnswer | StreamAnswer): Outcome => {
  switch (answer.type) {
    case 'table':
      // An answer in hand is written without reading it chunk by chunk (no promise per chunk).
      if ('rows' in answer)
        return {
          type: 'table',
          column_names: answer.column_names,
          column_types: answer.column_types,
          rows: answer.whole ?? answer.rows,
          truncated: () => answer.truncated(),
        };
      return {
        type: 'table',
        column_names: answer.column_names,
        column_types: answer.column_types,
        rows: answer.data,
        truncated: () => answer.truncated === true,
      };
    case 'ok':
      return ok(answer.affected_rows ?? 0);
    case 'error':
      return fail(answer.error_code, answer.error_message);
    default: {
      const _exhaustive: never = answer;
      return _exhaustive;
    }
  }
};

/** MySQL error numbers this server sends, with their SQLSTATE (MySQL's own pairing). */
const SQL_STATES: Record<number, string> = {
  1040: '08004',
  1044: '42000',
  1045: '28000',
  1046: '3D000',
  1047: '08S01',
  1049: '42000',
  1054: '42S22',
  1062: '23000',
  1064: '42000',
  1094: 'HY000',
  1146: '42S02',
  1153: '08S01',
  1193: 'HY000',
  1227: '42000',
  1243: 'HY000',
  1251: '08004',
  1317: '70100',
  1318: '42000',
  3024: 'HY000',
};

export const sqlStateOf = (code: number) => SQL_STATES[code] ?? 'HY000';

/** MySQL's error numbers the connection itself answers with. */
export const MysqlError = {
  AccessDenied: 1045,
  NoDatabase: 1046,
  UnknownCommand: 1047,
  UnknownDatabase: 1049,
  NoSuchThread: 1094,
  UnknownTable: 1146,
  UnknownSystemVariable: 1193,
  UnknownStatement: 1243,
  NotSupportedAuthMode: 1251,
  Interrupted: 1317,
  Syntax: 1064,
  Internal: 1105,
  PacketTooLarge: 1153,
  /** ER_PS_MANY_PARAM: a prepared statement with more `?` than the server takes. */
  TooManyPlaceholders: 1390,
} as const;
