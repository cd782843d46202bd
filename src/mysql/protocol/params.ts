import { ColumnType } from './constants';
import { MalformedPacket, PayloadReader } from './payloadReader';

export type ParamType = { type: number; unsigned: boolean };

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** An integer as the engine takes it: a number when exact, else its decimal text. */
const integer = (v: bigint): number | string => {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v.toString();
};

const readDate = (r: PayloadReader): string => {
  const length = r.int1();
  if (length === 0) return '0000-00-00 00:00:00';
  const year = r.int2();
  const month = r.int1();
  const day = r.int1();
  const date = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
  if (length < 7) return date;
  const time = `${pad(r.int1())}:${pad(r.int1())}:${pad(r.int1())}`;
  if (length < 11) return `${date} ${time}`;
  return `${date} ${time}.${pad(r.int4(), 6)}`;
};

const readTime = (r: PayloadReader): string => {
  const length = r.int1();
  if (length === 0) return '00:00:00';
  const negative = r.int1() === 1;
  const days = r.int4();
  const hours = days * 24 + r.int1();
  const time = `${negative ? '-' : ''}${pad(hours)}:${pad(r.int1())}:${pad(r.int1())}`;
  return length >= 12 ? `${time}.${pad(r.int4(), 6)}` : time;
};

/** One parameter value of COM_STMT_EXECUTE, as the engine takes it (number, string or null). */
const readValue = (r: PayloadReader, t: ParamType): unknown => {
  switch (t.type) {
    case ColumnType.NULL:
      return null;
    case ColumnType.TINY: {
      const v = r.int1();
      return t.unsigned ? v : (v << 24) >> 24;
    }
    case ColumnType.SHORT:
    case ColumnType.YEAR: {
      const v = r.int2();
      return t.unsigned ? v : (v << 16) >> 16;
    }
    case ColumnType.LONG:
    case ColumnType.INT24: {
      const v = r.int4();
      return t.unsigned ? v : v | 0;
    }
    case ColumnType.LONGLONG: {
      const v = r.int8();
      return integer(t.unsigned ? v : BigInt.asIntN(64, v));
    }
    case ColumnType.FLOAT: {
      const v = r.bytes(4).readFloatLE(0);
      // The float the client meant, not its binary neighbourhood (0.1f is 0.10000000149…).
      return Number(v.toPrecision(7));
    }
    case ColumnType.DOUBLE:
      return r.bytes(8).readDoubleLE(0);
    case ColumnType.DATE:
    case ColumnType.DATETIME:
    case ColumnType.TIMESTAMP:
      return readDate(r);
    case ColumnType.TIME:
      return readTime(r);
    case ColumnType.DECIMAL:
    case ColumnType.NEWDECIMAL: {
      const text = r.lenencBytes().toString('utf8');
      const n = Number(text);
      // A number when a double holds it exactly enough (15 significant digits), else the text.
      const digits = text
        .replace(/[^0-9]/g, '')
        .replace(/^0+/, '')
        .replace(/0+$/, '');
      return Number.isFinite(n) && digits.length <= 15 ? n : text;
    }
    default:
      // Strings, blobs, JSON, ENUM, SET, BIT, GEOMETRY: the bytes, read as UTF-8.
      return r.lenencBytes().toString('utf8');
  }
};

/**
 * The parameters of COM_STMT_EXECUTE (after the statement id, flags and iteration count): the
 * NULL bitmap, the types if the client sends them again (else those of the last execution), then
 * the values. A parameter sent with COM_STMT_SEND_LONG_DATA has no value here.
 */
export const readParams = (
  r: PayloadReader,
  count: number,
  previousTypes: ParamType[] | undefined,
  longData: Map<number, Buffer[]>,
): { values: unknown[]; types: ParamType[] } => {
  if (count === 0) return { values: [], types: [] };
  const nulls = r.bytes((count + 7) >> 3);
  const bound = r.int1();
  let types: ParamType[];
  if (bound === 1) {
    types = [];
    for (let i = 0; i < count; i++) {
      const type = r.int1();
      const flags = r.int1();
      types.push({ type, unsigned: (flags & 0x80) !== 0 });
    }
  } else if (previousTypes) types = previousTypes;
  else throw new MalformedPacket('the parameters have no types');
  const values: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const long = longData.get(i);
    if (long) values.push(Buffer.concat(long).toString('utf8'));
    else if (nulls[i >> 3]! & (1 << (i & 7))) values.push(null);
    else values.push(readValue(r, types[i]!));
  }
  return { values, types };
};
