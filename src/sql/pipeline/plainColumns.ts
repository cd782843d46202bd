import os from 'node:os';
import duckdb from '@duckdb/node-bindings';
import type { DuckDBDataChunk } from '@duckdb/node-api';

/** A column's cell at a row of the chunk (null for NULL). */
type CellAt = (row: number) => number | boolean | string | null;

/** A typed array's constructor, over memory DuckDB owns. */
type TypedArrayOf = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): ArrayLike<number>;
  readonly BYTES_PER_ELEMENT: number;
};

/**
 * Each plain type's values as a typed array over the vector's memory. A 64-bit integer is two
 * 32-bit halves: a value JavaScript holds exactly is then made without a BigInt.
 */
const PLAIN: Record<string, { array: TypedArrayOf; perValue: 1 | 2 }> = {
  TINYINT: { array: Int8Array, perValue: 1 },
  UTINYINT: { array: Uint8Array, perValue: 1 },
  BOOLEAN: { array: Uint8Array, perValue: 1 },
  SMALLINT: { array: Int16Array, perValue: 1 },
  USMALLINT: { array: Uint16Array, perValue: 1 },
  INTEGER: { array: Int32Array, perValue: 1 },
  UINTEGER: { array: Uint32Array, perValue: 1 },
  FLOAT: { array: Float32Array, perValue: 1 },
  DOUBLE: { array: Float64Array, perValue: 1 },
  BIGINT: { array: Int32Array, perValue: 2 },
  UBIGINT: { array: Int32Array, perValue: 2 },
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
  const plain = PLAIN[type];
  if (plain === undefined || !LITTLE_ENDIAN) return undefined;
  const width = plain.array.BYTES_PER_ELEMENT * plain.perValue;
  if (type === 'BOOLEAN' && duckdb.sizeof_bool !== 1) return undefined;
  const count = chunk.rowCount;
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, column);
  const data = duckdb.vector_get_data(vector, count * width);
  if (data.byteOffset % width !== 0) return undefined;
  // One bit per row, least significant first; no mask at all when every row is valid.
  const validity = duckdb.vector_get_validity(vector, Math.ceil(count / 64) * 8) as Uint8Array | null;
  const valid = validity ? (row: number) => (validity[row >> 3]! & (1 << (row & 7))) !== 0 : () => true;
  const values = new plain.array(data.buffer, data.byteOffset, count * plain.perValue);
  switch (type) {
    case 'BIGINT':
    case 'UBIGINT': {
      const halves = values;
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
