import { Charset, ColumnFlag, ColumnType } from './constants';

/** How the cells of one column are written: chosen once per column from its DuckDB type. */
type CellKind =
  | 'integer'
  | 'boolean'
  | 'decimal'
  | 'float'
  | 'double'
  | 'date'
  | 'datetime'
  | 'time'
  | 'string'
  | 'json'
  | 'blob'
  | 'interval'
  | 'null';

export type Column = {
  name: string;
  /** MySQL column type (ColumnType). */
  type: number;
  flags: number;
  /** Digits after the point (31: not fixed, MySQL's value for floating point). */
  decimals: number;
  /** Display length in bytes. */
  length: number;
  charset: number;
  kind: CellKind;
  /** Bytes of a binary-protocol integer cell (1, 2, 4, 8). */
  width: number;
};

const NOT_FIXED_DEC = 31;

const integerTypes: Record<string, { type: number; width: number; length: number; unsigned: boolean }> = {
  TINYINT: { type: ColumnType.TINY, width: 1, length: 4, unsigned: false },
  SMALLINT: { type: ColumnType.SHORT, width: 2, length: 6, unsigned: false },
  INTEGER: { type: ColumnType.LONG, width: 4, length: 11, unsigned: false },
  BIGINT: { type: ColumnType.LONGLONG, width: 8, length: 20, unsigned: false },
  UTINYINT: { type: ColumnType.TINY, width: 1, length: 3, unsigned: true },
  USMALLINT: { type: ColumnType.SHORT, width: 2, length: 5, unsigned: true },
  UINTEGER: { type: ColumnType.LONG, width: 4, length: 10, unsigned: true },
  UBIGINT: { type: ColumnType.LONGLONG, width: 8, length: 20, unsigned: true },
};

const base = (name: string, kind: CellKind, type: number): Column => ({
  name,
  type,
  flags: 0,
  decimals: 0,
  length: 0,
  charset: Charset.BINARY,
  kind,
  width: 0,
});

/** Text columns: utf8mb4, up to 65,535 characters as far as a client's metadata is concerned. */
const text = (name: string, kind: CellKind, type: number = ColumnType.VAR_STRING): Column => ({
  ...base(name, kind, type),
  charset: Charset.UTF8MB4,
  length: 65535 * 4,
});

/**
 * The MySQL column a DuckDB type is shown as. Numbers keep their width and sign, DECIMAL its
 * precision and scale, dates and timestamps are DATE/DATETIME(6), nested types (LIST, STRUCT,
 * MAP) are JSON, BLOB is binary; anything else is a string.
 */
export const columnOf = (name: string, duckType: string): Column => {
  const t = duckType.trim().toUpperCase();
  const integer = integerTypes[t];
  if (integer)
    return {
      ...base(name, 'integer', integer.type),
      flags: ColumnFlag.NUM | (integer.unsigned ? ColumnFlag.UNSIGNED : 0),
      length: integer.length,
      width: integer.width,
    };
  if (t === 'BOOLEAN')
    return { ...base(name, 'boolean', ColumnType.TINY), flags: ColumnFlag.NUM, length: 1, width: 1 };
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(t);
  if (decimal) {
    const precision = Number(decimal[1]);
    const scale = Number(decimal[2]);
    return {
      ...base(name, 'decimal', ColumnType.NEWDECIMAL),
      flags: ColumnFlag.NUM,
      decimals: scale,
      length: precision + (scale > 0 ? 2 : 1),
    };
  }
  if (t === 'HUGEINT' || t === 'UHUGEINT' || t === 'VARINT' || t === 'BIGNUM')
    return {
      ...base(name, 'decimal', ColumnType.NEWDECIMAL),
      flags: ColumnFlag.NUM | (t === 'UHUGEINT' ? ColumnFlag.UNSIGNED : 0),
      length: 40,
    };
  if (t === 'FLOAT' || t === 'REAL' || t === 'FLOAT4')
    return {
      ...base(name, 'float', ColumnType.FLOAT),
      flags: ColumnFlag.NUM,
      decimals: NOT_FIXED_DEC,
      length: 12,
    };
  if (t === 'DOUBLE' || t === 'FLOAT8')
    return {
      ...base(name, 'double', ColumnType.DOUBLE),
      flags: ColumnFlag.NUM,
      decimals: NOT_FIXED_DEC,
      length: 22,
    };
  if (t === 'DATE') return { ...base(name, 'date', ColumnType.DATE), length: 10 };
  if (/^TIMESTAMP/.test(t) || t === 'DATETIME')
    return { ...base(name, 'datetime', ColumnType.DATETIME), decimals: 6, length: 26 };
  if (t === 'TIME') return { ...base(name, 'time', ColumnType.TIME), decimals: 6, length: 17 };
  if (t === 'BLOB' || t === 'BYTEA')
    return {
      ...base(name, 'blob', ColumnType.BLOB),
      flags: ColumnFlag.BLOB | ColumnFlag.BINARY,
      length: 65535,
    };
  if (t === 'INTERVAL') return text(name, 'interval');
  if (t === 'NULL' || t === '"NULL"') return { ...base(name, 'null', ColumnType.NULL) };
  if (t === 'JSON' || /\]$/.test(t) || /^(STRUCT|MAP|UNION)\(/.test(t))
    return { ...text(name, 'json', ColumnType.JSON), flags: ColumnFlag.BLOB, length: 0xffffffff };
  return text(name, 'string');
};
