/**
 * The engine's error codes (MySQL's numbering, as the HTTP endpoint answers them) as PostgreSQL's
 * SQLSTATEs, which PostgreSQL drivers turn into their error classes. The engine's own code is kept in
 * the error's detail.
 */
const SQL_STATES: Record<number, string> = {
  1064: '42601', // syntax_error
  1049: '3D000', // invalid_catalog_name
  1146: '42P01', // undefined_table
  1054: '42703', // undefined_column (DuckDB's binder errors)
  1227: '42501', // insufficient_privilege
  1318: '42P02', // undefined_parameter
  1032: '42704', // undefined_object
  1062: '42710', // duplicate_object
  1210: '22023', // invalid_parameter_value
  3024: '57014', // query_canceled (statement timeout)
  1317: '57014', // query_canceled
  2003: '08001', // sqlclient_unable_to_establish_sqlconnection
  1296: '58000', // system_error (an external database's error)
  1040: '53300', // too_many_connections
  1153: '54000', // program_limit_exceeded
  1045: '28000', // invalid_authorization_specification
  1105: 'XX000', // internal_error
};

export const sqlStateOf = (engineCode: number): string => SQL_STATES[engineCode] ?? 'XX000';

/** SQLSTATEs the connection itself answers with. */
export const PgState = {
  SyntaxError: '42601',
  ProtocolViolation: '08P01',
  FeatureNotSupported: '0A000',
  InvalidStatementName: '26000',
  InvalidCursorName: '34000',
  DuplicatePreparedStatement: '42P05',
  InFailedTransaction: '25P02',
  QueryCanceled: '57014',
  AdminShutdown: '57P01',
  InvalidAuthorization: '28000',
  InvalidPassword: '28P01',
  TooManyConnections: '53300',
  OutOfMemory: '53200',
  InvalidParameterValue: '22023',
  UndefinedParameter: '42P02',
  TooManyArguments: '54023',
  Internal: 'XX000',
} as const;
