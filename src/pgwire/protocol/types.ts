/**
 * DuckDB's column types as PostgreSQL types (OID, size, modifier) and the engine's cells in
 * PostgreSQL's text and binary forms. The engine answers cells in its JSON-ready form (integers as
 * numbers or, past 2^53, strings; DECIMALs as numbers; dates and timestamps as text; BLOBs as
 * base64; lists as arrays; structs and maps as objects): each column's rule is chosen once from its
 * type, as the MySQL door does.
 */
import { intervalText } from '../../doorway/interval';

export const Oid = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  json: 114,
  float4: 700,
  float8: 701,
  varchar: 1043,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  interval: 1186,
  numeric: 1700,
  uuid: 2950,
  unknown: 705,
} as const;

/** The array type of each element type a DuckDB list can be sent as. */
const ARRAY_OF: Record<number, number> = {
  [Oid.bool]: 1000,
  [Oid.bytea]: 1001,
  [Oid.int2]: 1005,
  [Oid.int4]: 1007,
  [Oid.text]: 1009,
  [Oid.int8]: 1016,
  [Oid.float4]: 1021,
  [Oid.float8]: 1022,
  [Oid.varchar]: 1015,
  [Oid.date]: 1182,
  [Oid.time]: 1183,
  [Oid.timestamp]: 1115,
  [Oid.timestamptz]: 1185,
  [Oid.interval]: 1187,
  [Oid.numeric]: 1231,
  [Oid.uuid]: 2951,
  [Oid.json]: 199,
};

type Kind =
  | 'bool'
  | 'int'
  | 'float4'
  | 'float8'
  | 'numeric'
  | 'text'
  | 'json'
  | 'bytea'
  | 'date'
  | 'time'
  | 'timestamp'
  | 'timestamptz'
  | 'interval'
  | 'uuid'
  | 'array';

export type PgColumnType = {
  oid: number;
  /** typlen: bytes of a fixed-size type, -1 for variable size. */
  size: number;
  /** atttypmod: DECIMAL's precision and scale ((p << 16 | s) + 4), -1 when none. */
  modifier: number;
  kind: Kind;
  /** Digits after the point (DECIMAL only). */
  scale: number;
  /** The elements' type (lists only). */
  element?: PgColumnType;
};

const plain = (oid: number, size: number, kind: Kind): PgColumnType => ({
  oid,
  size,
  modifier: -1,
  kind,
  scale: 0,
});

const TYPES: Record<string, PgColumnType> = {
  BOOLEAN: plain(Oid.bool, 1, 'bool'),
  TINYINT: plain(Oid.int2, 2, 'int'),
  UTINYINT: plain(Oid.int2, 2, 'int'),
  SMALLINT: plain(Oid.int2, 2, 'int'),
  USMALLINT: plain(Oid.int4, 4, 'int'),
  INTEGER: plain(Oid.int4, 4, 'int'),
  UINTEGER: plain(Oid.int8, 8, 'int'),
  BIGINT: plain(Oid.int8, 8, 'int'),
  // Past int8's range: PostgreSQL's only integer that holds them is numeric.
  UBIGINT: plain(Oid.numeric, -1, 'numeric'),
  HUGEINT: plain(Oid.numeric, -1, 'numeric'),
  UHUGEINT: plain(Oid.numeric, -1, 'numeric'),
  FLOAT: plain(Oid.float4, 4, 'float4'),
  REAL: plain(Oid.float4, 4, 'float4'),
  DOUBLE: plain(Oid.float8, 8, 'float8'),
  VARCHAR: plain(Oid.text, -1, 'text'),
  JSON: plain(Oid.json, -1, 'json'),
  BLOB: plain(Oid.bytea, -1, 'bytea'),
  DATE: plain(Oid.date, 4, 'date'),
  TIME: plain(Oid.time, 8, 'time'),
  TIMESTAMP: plain(Oid.timestamp, 8, 'timestamp'),
  TIMESTAMP_S: plain(Oid.timestamp, 8, 'timestamp'),
  TIMESTAMP_MS: plain(Oid.timestamp, 8, 'timestamp'),
  TIMESTAMP_NS: plain(Oid.timestamp, 8, 'timestamp'),
  'TIMESTAMP WITH TIME ZONE': plain(Oid.timestamptz, 8, 'timestamptz'),
  INTERVAL: plain(Oid.interval, 16, 'interval'),
  UUID: plain(Oid.uuid, 16, 'uuid'),
};

const TEXT = TYPES.VARCHAR!;

/** DuckDB's plain type names the door knows by name (DECIMALs and lists are read from their form). */
export const NAMED_DUCKDB_TYPES: readonly string[] = Object.keys(TYPES);

/** The PostgreSQL type a DuckDB type name is sent as (text for anything without a counterpart: structs, maps, enums). */
export const pgTypeOf = (duckType: string): PgColumnType => {
  const known = TYPES[duckType];
  if (known) return known;
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(duckType);
  if (decimal) {
    const [precision, scale] = [Number(decimal[1]), Number(decimal[2])];
    return { oid: Oid.numeric, size: -1, modifier: ((precision << 16) | scale) + 4, kind: 'numeric', scale };
  }
  // Lists first: `VARCHAR[]` is a list of text, not text.
  const list = /^(.*)\[\d*\]$/.exec(duckType);
  if (list) {
    const element = pgTypeOf(list[1]!);
    const oid = ARRAY_OF[element.oid];
    if (oid !== undefined && element.kind !== 'array')
      return { oid, size: -1, modifier: -1, kind: 'array', scale: 0, element };
    return TEXT;
  }
  if (/^VARCHAR/.test(duckType)) return TEXT;
  return TEXT;
};

// ---- text form ------------------------------------------------------------------------------

const base64Bytes = (cell: unknown): Buffer =>
  cell instanceof Uint8Array ? Buffer.from(cell) : Buffer.from(String(cell), 'base64');

/** 'YYYY-MM-DD HH:MM:SS.ffffff' as PostgreSQL prints it: the fraction without trailing zeros. */
const timestampText = (cell: unknown) =>
  String(cell)
    .replace(/(\.\d*?)0+$/, '$1')
    .replace(/\.$/, '');

const numericText = (cell: unknown, type: PgColumnType): string => {
  if (typeof cell === 'number') {
    if (!Number.isFinite(cell)) return 'NaN';
    if (type.modifier >= 0 && Math.abs(cell) < 1e21) return cell.toFixed(type.scale);
    if (Math.abs(cell) < 1e21) return String(cell);
    return BigInt(cell).toString();
  }
  return String(cell);
};

/** An array element inside `{…}`: quoted when PostgreSQL would quote it. */
const arrayElement = (cell: unknown, type: PgColumnType): string => {
  if (cell === null || cell === undefined) return 'NULL';
  const text = textValue(cell, type);
  const s = typeof text === 'string' ? text : `\\\\x${text.toString('hex')}`;
  return s === '' || /[{},"\\\s]/.test(s) || /^null$/i.test(s) ? `"${s.replace(/[\\"]/g, '\\$&')}"` : s;
};

const textValue = (cell: unknown, type: PgColumnType): string | Buffer => {
  switch (type.kind) {
    case 'bool':
      return cell === true || cell === 1 || cell === 'true' ? 't' : 'f';
    case 'int':
      return String(cell);
    case 'float4':
    case 'float8':
      return typeof cell === 'number'
        ? Number.isNaN(cell)
          ? 'NaN'
          : cell === Infinity
            ? 'Infinity'
            : cell === -Infinity
              ? '-Infinity'
              : String(cell)
        : String(cell);
    case 'numeric':
      return numericText(cell, type);
    case 'date':
    case 'time':
    case 'uuid':
      return String(cell);
    case 'timestamp':
      return timestampText(cell);
    case 'timestamptz':
      return `${timestampText(cell)}+00`;
    case 'interval':
      return intervalText(cell, 'mon');
    case 'bytea':
      return `\\x${base64Bytes(cell).toString('hex')}`;
    case 'json':
      return typeof cell === 'string' ? cell : JSON.stringify(cell);
    case 'array':
      return Array.isArray(cell)
        ? `{${cell.map((e) => arrayElement(e, type.element!)).join(',')}}`
        : String(cell);
    case 'text':
      return typeof cell === 'string' ? cell : typeof cell === 'object' ? JSON.stringify(cell) : String(cell);
    default: {
      const _exhaustive: never = type.kind;
      return _exhaustive;
    }
  }
};

/** A non-null cell in PostgreSQL's text format. */
export const textCell = (cell: unknown, type: PgColumnType): string => {
  const v = textValue(cell, type);
  return typeof v === 'string' ? v : v.toString('utf8');
};

// ---- binary form ----------------------------------------------------------------------------

/** Microseconds from 1970-01-01 to PostgreSQL's epoch, 2000-01-01. */
const PG_EPOCH_MICROS = 946_684_800_000_000n;
const PG_EPOCH_DAYS = 10_957;

const TIMESTAMP = /^(-?\d{4,})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?/;

const micros1970 = (cell: unknown): bigint => {
  const m = TIMESTAMP.exec(String(cell));
  if (!m) throw new BinaryUnsupported(`a timestamp as ${JSON.stringify(cell)}`);
  const days = BigInt(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 86_400_000);
  const seconds = days * 86_400n + BigInt(Number(m[4]) * 3600 + Number(m[5]) * 60 + Number(m[6]));
  return seconds * 1_000_000n + BigInt((m[7] ?? '').slice(0, 6).padEnd(6, '0'));
};

const timeMicros = (cell: unknown): bigint => {
  const m = /^(\d+):(\d\d):(\d\d)(?:\.(\d{1,9}))?$/.exec(String(cell));
  if (!m) throw new BinaryUnsupported(`a time as ${JSON.stringify(cell)}`);
  return (
    BigInt(Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3])) * 1_000_000n +
    BigInt((m[4] ?? '').slice(0, 6).padEnd(6, '0'))
  );
};

/** PostgreSQL's binary numeric: base-10000 digits with weight, sign and display scale. */
const numericBinary = (text: string): Buffer => {
  if (text === 'NaN') return Buffer.from([0, 0, 0, 0, 0xc0, 0, 0, 0]);
  const negative = text.startsWith('-');
  const [intPart = '0', fracPart = ''] = text.replace(/^[-+]/, '').split('.');
  const intDigits = intPart.replace(/^0+/, '');
  const padInt = intDigits.padStart(Math.ceil(intDigits.length / 4) * 4, '0');
  const padFrac = fracPart.padEnd(Math.ceil(fracPart.length / 4) * 4, '0');
  const groups: number[] = [];
  for (let i = 0; i < padInt.length; i += 4) groups.push(Number(padInt.slice(i, i + 4)));
  for (let i = 0; i < padFrac.length; i += 4) groups.push(Number(padFrac.slice(i, i + 4)));
  let weight = padInt.length / 4 - 1;
  // Leading and trailing zero groups are not sent.
  while (groups.length && groups[0] === 0) {
    groups.shift();
    weight--;
  }
  while (groups.length && groups[groups.length - 1] === 0) groups.pop();
  if (!groups.length) weight = 0;
  const out = Buffer.alloc(8 + groups.length * 2);
  out.writeInt16BE(groups.length, 0);
  out.writeInt16BE(weight, 2);
  out.writeUInt16BE(negative && groups.length ? 0x4000 : 0, 4);
  out.writeInt16BE(fracPart.length, 6);
  groups.forEach((g, i) => out.writeInt16BE(g, 8 + i * 2));
  return out;
};

/** A bound parameter that cannot be taken (PostgreSQL's 22P02 for bad input, 0A000 for a type not served). */
export class ParamInvalid extends Error {
  constructor(
    readonly sqlState: string,
    message: string,
  ) {
    super(message);
    this.name = 'ParamInvalid';
  }
}

/** A column asked for in binary that has no binary form here (arrays): the client is told which. */
export class BinaryUnsupported extends Error {
  constructor(what: string) {
    super(`binary format is not supported for ${what}; ask for text format (0)`);
    this.name = 'BinaryUnsupported';
  }
}

/**
 * PostgreSQL's binary array (array_send) of one dimension: dimensions, whether any element is NULL,
 * the element type, the length and lower bound (1), then each element with its length (-1: NULL).
 */
const arrayBinary = (cell: unknown, element: PgColumnType): Buffer => {
  const items = Array.isArray(cell) ? (cell as unknown[]) : [];
  const parts = items.map((item) => (item === null || item === undefined ? null : binaryCell(item, element)));
  const head = Buffer.alloc(items.length ? 20 : 12);
  head.writeInt32BE(items.length ? 1 : 0, 0);
  head.writeInt32BE(parts.includes(null) ? 1 : 0, 4);
  head.writeUInt32BE(element.oid, 8);
  if (items.length) {
    head.writeInt32BE(items.length, 12);
    head.writeInt32BE(1, 16);
  }
  const chunks: Buffer[] = [head];
  for (const part of parts) {
    const length = Buffer.alloc(4);
    length.writeInt32BE(part === null ? -1 : part.length);
    chunks.push(length);
    if (part) chunks.push(part);
  }
  return Buffer.concat(chunks);
};

/** A non-null cell in PostgreSQL's binary format (the type's send function). */
export const binaryCell = (cell: unknown, type: PgColumnType): Buffer => {
  switch (type.kind) {
    case 'bool':
      return Buffer.from([textValue(cell, type) === 't' ? 1 : 0]);
    case 'int': {
      const b = Buffer.alloc(type.size);
      if (type.size === 2) b.writeInt16BE(Number(cell));
      else if (type.size === 4) b.writeInt32BE(Number(cell));
      else b.writeBigInt64BE(BigInt(typeof cell === 'number' ? Math.trunc(cell) : String(cell)));
      return b;
    }
    case 'float4': {
      const b = Buffer.alloc(4);
      b.writeFloatBE(Number(cell));
      return b;
    }
    case 'float8': {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(Number(cell));
      return b;
    }
    case 'numeric':
      return numericBinary(numericText(cell, type));
    case 'date': {
      const b = Buffer.alloc(4);
      const m = /^(-?\d{4,})-(\d\d)-(\d\d)$/.exec(String(cell));
      if (!m) throw new BinaryUnsupported(`a date as ${JSON.stringify(cell)}`);
      b.writeInt32BE(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 86_400_000 - PG_EPOCH_DAYS);
      return b;
    }
    case 'time': {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(timeMicros(cell));
      return b;
    }
    case 'timestamp':
    case 'timestamptz': {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(micros1970(cell) - PG_EPOCH_MICROS);
      return b;
    }
    case 'interval': {
      const {
        months = 0,
        days = 0,
        micros = 0,
      } = (cell ?? {}) as { months?: number; days?: number; micros?: number | string };
      const b = Buffer.alloc(16);
      b.writeBigInt64BE(BigInt(micros), 0);
      b.writeInt32BE(Number(days), 8);
      b.writeInt32BE(Number(months), 12);
      return b;
    }
    case 'uuid':
      return Buffer.from(String(cell).replace(/-/g, ''), 'hex');
    case 'bytea':
      return base64Bytes(cell);
    case 'json':
    case 'text':
      return Buffer.from(textCell(cell, type), 'utf8');
    case 'array':
      return arrayBinary(cell, type.element!);
    default: {
      const _exhaustive: never = type.kind;
      return _exhaustive;
    }
  }
};

// ---- parameters ---------------------------------------------------------------------------------

/**
 * A bound parameter as the engine takes it. Text parameters stay text (DuckDB casts them where the
 * statement's context types them) unless the client declared a number or boolean type; binary
 * ones are read by their declared type, which the client must then give.
 */
export const paramValue = (raw: Buffer | null, format: number, oid: number): unknown => {
  if (raw === null) return null;
  // The engine takes no bytes as a parameter: refused rather than passed on as text.
  if (oid === Oid.bytea)
    throw new ParamInvalid(
      '0A000',
      'bytea parameters are not supported: send the bytes as hex text and convert them in the statement (from_hex($1))',
    );
  if (format === 0) {
    const text = raw.toString('utf8');
    const invalid = (type: string) =>
      new ParamInvalid(
        '22P02',
        `invalid input syntax for type ${type}: ${JSON.stringify(text.slice(0, 100))}`,
      );
    switch (oid) {
      case Oid.int2:
      case Oid.int4:
      case Oid.int8: {
        if (!/^\s*[-+]?\d+\s*$/.test(text))
          throw invalid(oid === Oid.int8 ? 'bigint' : oid === Oid.int4 ? 'integer' : 'smallint');
        const n = Number(text);
        return Number.isSafeInteger(n) ? n : text.trim();
      }
      case Oid.float4:
      case Oid.float8: {
        const trimmed = text.trim();
        if (/^[-+]?(infinity|inf)$/i.test(trimmed)) return trimmed.startsWith('-') ? -Infinity : Infinity;
        if (/^nan$/i.test(trimmed)) return NaN;
        if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) throw invalid('double precision');
        return Number(trimmed);
      }
      case Oid.bool: {
        const b = text.trim().toLowerCase();
        if (/^(t|tr|tru|true|y|ye|yes|on|1)$/.test(b)) return true;
        if (/^(f|fa|fal|fals|false|n|no|of|off|0)$/.test(b)) return false;
        throw invalid('boolean');
      }
      default:
        return text;
    }
  }
  const width: Record<number, number> = {
    [Oid.int2]: 2,
    [Oid.int4]: 4,
    [Oid.int8]: 8,
    [Oid.float4]: 4,
    [Oid.float8]: 8,
    [Oid.bool]: 1,
    [Oid.date]: 4,
    [Oid.timestamp]: 8,
    [Oid.timestamptz]: 8,
    [Oid.uuid]: 16,
  };
  // PostgreSQL's two answers: bytes missing end the message early (08P01), bytes left over are a bad value (22P03).
  const expected = width[oid];
  if (expected !== undefined && raw.length < expected)
    throw new ParamInvalid(
      '08P01',
      `insufficient data left in message: ${raw.length} bytes for a value of ${expected}`,
    );
  if (expected !== undefined && raw.length > expected)
    throw new ParamInvalid(
      '22P03',
      `incorrect binary data format in bind parameter: ${raw.length} bytes for a value of ${expected}`,
    );
  switch (oid) {
    case Oid.int2:
      return raw.readInt16BE(0);
    case Oid.int4:
      return raw.readInt32BE(0);
    case Oid.int8: {
      const n = raw.readBigInt64BE(0);
      return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(n)
        : String(n);
    }
    case Oid.float4:
      return raw.readFloatBE(0);
    case Oid.float8:
      return raw.readDoubleBE(0);
    case Oid.bool:
      return raw[0] !== 0;
    case Oid.text:
    case Oid.varchar:
    case Oid.json:
    case Oid.unknown:
      return raw.toString('utf8');
    case Oid.date:
      return new Date((raw.readInt32BE(0) + PG_EPOCH_DAYS) * 86_400_000).toISOString().slice(0, 10);
    case Oid.timestamp:
    case Oid.timestamptz: {
      const micros = raw.readBigInt64BE(0) + PG_EPOCH_MICROS;
      const ms = Number(micros / 1000n);
      const frac = String(((micros % 1_000_000n) + 1_000_000n) % 1_000_000n).padStart(6, '0');
      return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}.${frac}`;
    }
    case Oid.uuid: {
      const h = raw.toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
    default:
      throw new BinaryUnsupported(`parameters of type ${oid === 0 ? 'unspecified (0)' : `OID ${oid}`}`);
  }
};
