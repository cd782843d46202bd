import type { Column } from './columns';
import type { PacketWriter } from './packetWriter';
import { intervalText } from '../../doorway/interval';

/** A double as MySQL prints it: shortest round-trip digits, exponent without '+'. */
const doubleText = (n: number) => String(n).replace('e+', 'e');

const decimalText = (cell: unknown, scale: number) => {
  if (typeof cell === 'number')
    return Math.abs(cell) < 1e21 && Number.isFinite(cell) ? cell.toFixed(scale) : doubleText(cell);
  return String(cell);
};

const stringText = (cell: unknown) =>
  typeof cell === 'string' ? cell : typeof cell === 'object' ? JSON.stringify(cell) : String(cell);

/** A non-null cell in the text protocol: the characters MySQL would send. */
const textOf = (column: Column, cell: unknown): string | Buffer => {
  switch (column.kind) {
    case 'integer':
      return typeof cell === 'boolean' ? (cell ? '1' : '0') : String(cell);
    case 'boolean':
      return cell === true || cell === 1 || cell === '1' || cell === 'true' ? '1' : '0';
    case 'decimal':
      return decimalText(cell, column.decimals);
    case 'float':
    case 'double':
      return typeof cell === 'number' ? doubleText(cell) : String(cell);
    case 'date':
    case 'datetime':
    case 'time':
    case 'string':
      return stringText(cell);
    case 'json':
      return typeof cell === 'string' ? cell : JSON.stringify(cell);
    case 'blob':
      return blobOf(cell);
    case 'interval':
      return intervalText(cell, 'month');
    case 'null':
      return '';
    default: {
      const _exhaustive: never = column.kind;
      return _exhaustive;
    }
  }
};

/** The engine answers BLOBs as base64 (JSON has no bytes); the wire carries the bytes. */
const blobOf = (cell: unknown) =>
  cell instanceof Uint8Array ? Buffer.from(cell) : Buffer.from(String(cell), 'base64');

export const writeTextCell = (w: PacketWriter, column: Column, cell: unknown) => {
  if (cell === null || cell === undefined || column.kind === 'null') {
    w.nullCell();
    return;
  }
  // Integers (most cells of most results) go straight to digits, with no string made.
  if (column.kind === 'integer' && typeof cell === 'number' && Number.isSafeInteger(cell)) {
    w.lenencInteger(cell);
    return;
  }
  const value = textOf(column, cell);
  if (typeof value === 'string') w.lenencString(value);
  else w.lenencBytes(value);
};

const toBigInt = (cell: unknown): bigint => {
  if (typeof cell === 'bigint') return cell;
  if (typeof cell === 'boolean') return cell ? 1n : 0n;
  if (typeof cell === 'number') return BigInt(Math.trunc(cell));
  return BigInt(String(cell));
};

const DATE = /^(\d{4})-(\d\d)-(\d\d)(?:[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?)?$/;
const TIME = /^(-)?(\d+):(\d\d):(\d\d)(?:\.(\d{1,9}))?$/;

/** Binary DATE/DATETIME: the shortest of 0, 4, 7 or 11 bytes; a value MySQL cannot hold is the zero date. */
const writeBinaryDate = (w: PacketWriter, cell: unknown, withTime: boolean) => {
  const m = DATE.exec(String(cell));
  if (!m) {
    w.int1(0);
    return;
  }
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const micros = m[7] ? Number(m[7].slice(0, 6).padEnd(6, '0')) : 0;
  const length =
    !withTime || (hour === 0 && minute === 0 && second === 0 && micros === 0) ? 4 : micros ? 11 : 7;
  w.int1(length).int2(year).int1(month).int1(day);
  if (length >= 7) w.int1(hour).int1(minute).int1(second);
  if (length === 11) w.int4(micros);
};

const writeBinaryTime = (w: PacketWriter, cell: unknown) => {
  const m = TIME.exec(String(cell));
  if (!m) {
    w.int1(0);
    return;
  }
  const hours = Number(m[2]);
  const micros = m[5] ? Number(m[5].slice(0, 6).padEnd(6, '0')) : 0;
  w.int1(micros ? 12 : 8)
    .int1(m[1] ? 1 : 0)
    .int4(Math.floor(hours / 24))
    .int1(hours % 24)
    .int1(Number(m[3]))
    .int1(Number(m[4]));
  if (micros) w.int4(micros);
};

/** A non-null cell in the binary protocol (COM_STMT_EXECUTE results). */
export const writeBinaryCell = (w: PacketWriter, column: Column, cell: unknown) => {
  switch (column.kind) {
    case 'integer':
    case 'boolean': {
      const n = column.kind === 'boolean' ? (textOf(column, cell) === '1' ? 1 : 0) : cell;
      if (column.width === 8) w.int8(toBigInt(n));
      else {
        const v = typeof n === 'number' ? n : Number(toBigInt(n));
        if (column.width === 1) w.int1(v);
        else if (column.width === 2) w.int2(v);
        else w.int4(v);
      }
      return;
    }
    case 'float':
      w.float(Number(cell));
      return;
    case 'double':
      w.double(Number(cell));
      return;
    case 'date':
      writeBinaryDate(w, cell, false);
      return;
    case 'datetime':
      writeBinaryDate(w, cell, true);
      return;
    case 'time':
      writeBinaryTime(w, cell);
      return;
    case 'decimal':
    case 'string':
    case 'json':
    case 'blob':
    case 'interval':
    case 'null': {
      const value = textOf(column, cell);
      if (typeof value === 'string') w.lenencString(value);
      else w.lenencBytes(value);
      return;
    }
    default: {
      const _exhaustive: never = column.kind;
      return _exhaustive;
    }
  }
};
