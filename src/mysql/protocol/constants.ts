/** Numbers of the MySQL client/server protocol (include/mysql_com.h, field_types.h). */

export const Capability = {
  LONG_PASSWORD: 0x1,
  FOUND_ROWS: 0x2,
  LONG_FLAG: 0x4,
  CONNECT_WITH_DB: 0x8,
  NO_SCHEMA: 0x10,
  ODBC: 0x40,
  IGNORE_SPACE: 0x100,
  PROTOCOL_41: 0x200,
  INTERACTIVE: 0x400,
  SSL: 0x800,
  IGNORE_SIGPIPE: 0x1000,
  TRANSACTIONS: 0x2000,
  RESERVED: 0x4000,
  SECURE_CONNECTION: 0x8000,
  MULTI_STATEMENTS: 0x10000,
  MULTI_RESULTS: 0x20000,
  PS_MULTI_RESULTS: 0x40000,
  PLUGIN_AUTH: 0x80000,
  CONNECT_ATTRS: 0x100000,
  PLUGIN_AUTH_LENENC_CLIENT_DATA: 0x200000,
  DEPRECATE_EOF: 0x1000000,
} as const;

export const ServerStatus = {
  AUTOCOMMIT: 0x2,
  MORE_RESULTS_EXISTS: 0x8,
} as const;

export const Command = {
  QUIT: 0x01,
  INIT_DB: 0x02,
  QUERY: 0x03,
  FIELD_LIST: 0x04,
  STATISTICS: 0x09,
  PROCESS_INFO: 0x0a,
  PROCESS_KILL: 0x0c,
  DEBUG: 0x0d,
  PING: 0x0e,
  CHANGE_USER: 0x11,
  STMT_PREPARE: 0x16,
  STMT_EXECUTE: 0x17,
  STMT_SEND_LONG_DATA: 0x18,
  STMT_CLOSE: 0x19,
  STMT_RESET: 0x1a,
  SET_OPTION: 0x1b,
  STMT_FETCH: 0x1c,
  RESET_CONNECTION: 0x1f,
} as const;

/** Column types (enum_field_types). */
export const ColumnType = {
  DECIMAL: 0x00,
  TINY: 0x01,
  SHORT: 0x02,
  LONG: 0x03,
  FLOAT: 0x04,
  DOUBLE: 0x05,
  NULL: 0x06,
  TIMESTAMP: 0x07,
  LONGLONG: 0x08,
  INT24: 0x09,
  DATE: 0x0a,
  TIME: 0x0b,
  DATETIME: 0x0c,
  YEAR: 0x0d,
  VARCHAR: 0x0f,
  BIT: 0x10,
  JSON: 0xf5,
  NEWDECIMAL: 0xf6,
  ENUM: 0xf7,
  SET: 0xf8,
  TINY_BLOB: 0xf9,
  MEDIUM_BLOB: 0xfa,
  LONG_BLOB: 0xfb,
  BLOB: 0xfc,
  VAR_STRING: 0xfd,
  STRING: 0xfe,
  GEOMETRY: 0xff,
} as const;

export const ColumnFlag = {
  NOT_NULL: 0x1,
  BLOB: 0x10,
  UNSIGNED: 0x20,
  BINARY: 0x80,
  NUM: 0x8000,
} as const;

export const Charset = {
  /** utf8mb4_general_ci: known to every client (255, MySQL 8's default, is not to MariaDB's). */
  UTF8MB4: 45,
  BINARY: 63,
} as const;

/** Largest payload of one packet; a longer one continues in the next. */
export const MAX_PACKET_PAYLOAD = 0xffffff;
