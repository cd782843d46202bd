import os from 'node:os';
import duckdb from '@duckdb/node-bindings';
import type { DuckDBDataChunk } from '@duckdb/node-api';

/** A column's cell at a row of the chunk (null for NULL). */
export type CellAt = (row: number) => number | boolean | string | null;

type Typed =
  Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

const WIDTH: Record<string, number> = {
  TINYINT: 1,
  UTINYINT: 1,
  BOOLEAN: 1,
  SMALLINT: 2,
  USMALLINT: 2,
  INTEGER: 4,
  UINTEGER: 4,
  FLOAT: 4,
  BIGINT: 8,
  UBIGINT: 8,
  DOUBLE: 8,
};

const view = (type: string, data: Uint8Array, count: number): Typed | undefined => {
  const { buffer, byteOffset } = data;
  switch (type) {
    case 'TINYINT':
      return new Int8Array(buffer, byteOffset, count);
    case 'UTINYINT':
    case 'BOOLEAN':
      return data.subarray(0, count);
    case 'SMALLINT':
      return new Int16Array(buffer, byteOffset, count);
    case 'USMALLINT':
      return new Uint16Array(buffer, byteOffset, count);
    case 'INTEGER':
      return new Int32Array(buffer, byteOffset, count);
    case 'UINTEGER':
      return new Uint32Array(buffer, byteOffset, count);
    case 'FLOAT':
      return new Float32Array(buffer, byteOffset, count);
    case 'DOUBLE':
      return new Float64Array(buffer, byteOffset, count);
    case 'BIGINT':
    case 'UBIGINT':
      // Two 32-bit halves per value: a value JavaScript holds exactly is made without a BigInt.
      return new Int32Array(buffer, byteOffset, count * 2);
  }
  return undefined;
};

const TWO_TO_32 = 4294967296;
const LITTLE_ENDIAN = os.endianness() === 'LE';

/**
 * Cells of the fixed-width columns most results are made of (integers up to 64 bits, floats,
 * booleans), read straight from the vector's memory: the value the column's rule in `values.ts`
 * makes from DuckDB's own reading (`getItem`), without the BigInt DuckDB's reading makes for every
 * 64-bit integer, nor the BigInt arithmetic of its NULL check. Undefined for any other type (and on
 * a big-endian machine, or memory not aligned for its type): the caller reads those as before.
 */
export const plainCells = (chunk: DuckDBDataChunk, column: number, type: string): CellAt | undefined => {
  const width = WIDTH[type];
  if (width === undefined || !LITTLE_ENDIAN) return undefined;
  if (type === 'BOOLEAN' && duckdb.sizeof_bool !== 1) return undefined;
  const count = chunk.rowCount;
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, column);
  const data = duckdb.vector_get_data(vector, count * width);
  if (data.byteOffset % width !== 0) return undefined;
  // One bit per row, least significant first; no mask at all when every row is valid.
  const validity = duckdb.vector_get_validity(vector, Math.ceil(count / 64) * 8) as Uint8Array | null;
  const valid = validity ? (row: number) => (validity[row >> 3]! & (1 << (row & 7))) !== 0 : () => true;
  const values = view(type, data, count)!;
  switch (type) {
    case 'BIGINT':
    case 'UBIGINT': {
      const halves = values as Int32Array;
      const signed = type === 'BIGINT';
      return (row) => {
        if (!valid(row)) return null;
        const high = signed ? halves[2 * row + 1]! : halves[2 * row + 1]! >>> 0;
        const n = high * TWO_TO_32 + (halves[2 * row]! >>> 0);
        if (Number.isSafeInteger(n)) return n;
        // Beyond 2^53 the sum above is rounded (and so never safe): the exact digits, as text.
        const bytes = new DataView(data.buffer, data.byteOffset + 8 * row, 8);
        return String(signed ? bytes.getBigInt64(0, true) : bytes.getBigUint64(0, true));
      };
    }
    case 'BOOLEAN':
      return (row) => (valid(row) ? values[row] !== 0 : null);
    case 'FLOAT':
    case 'DOUBLE':
      return (row) => {
        const n = values[row]!;
        return valid(row) && Number.isFinite(n) ? n : null;
      };
    default:
      return (row) => (valid(row) ? values[row]! : null);
  }
};
