import {
  JsonDuckDBValueConverter,
  JSDuckDBValueConverter,
  type DuckDBResult,
  type DuckDBType,
  type DuckDBValue,
  ResultReturnType,
} from '@duckdb/node-api';
import { integerDigits } from '../../shared/integerDigits';
import { plainCells } from './plainColumns';
import { timestampText } from '../../shared/time';
import { SqlError, SqlErrorCode } from '../errors';

const isIntegerType = (t: string) =>
  /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|VARINT|BIGNUM)$/.test(
    t,
  );

const safeInteger = (s: string) => {
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : s;
};

const microsTimestamp = (s: string) => {
  // DuckDB prints 'YYYY-MM-DD HH:MM:SS[.ffffff]'; MindsDB always shows six fractional digits.
  const m = /^(\d{4,}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d{1,6}))?/.exec(s);
  return m ? `${m[1]}.${(m[2] ?? '').padEnd(6, '0')}` : s;
};

/** What a JSON-converted cell (and, for BLOB and TIMESTAMPTZ, its JS form) becomes in an answer. */
type FromJson = (json: unknown, js: unknown) => unknown;

/**
 * A column's cells as valid JSON with MindsDB's conventions: NaN and infinities are null, big
 * integers are numbers when JavaScript can hold them exactly (else strings), decimals are numbers,
 * dates are YYYY-MM-DD, timestamps YYYY-MM-DD HH:MM:SS.ffffff, blobs base64, nested types JSON.
 * Chosen once per column: the type decides the rule, not each cell.
 */
const fromJsonFor = (type: string): FromJson => {
  if (isIntegerType(type)) return (json) => (typeof json === 'string' ? safeInteger(json) : json);
  if (/^DECIMAL/.test(type)) return (json) => Number(json);
  if (/^(DOUBLE|FLOAT|REAL)$/.test(type))
    return (json) => (typeof json === 'number' && Number.isFinite(json) ? json : null);
  if (type === 'TIMESTAMP WITH TIME ZONE')
    return (json, js) => {
      const d = js instanceof Date ? js : new Date(String(json));
      return Number.isFinite(d.getTime()) ? microsTimestamp(timestampText(d)) : String(json);
    };
  if (/^TIMESTAMP/.test(type)) return (json) => microsTimestamp(String(json));
  if (type === 'BLOB') return (_json, js) => Buffer.from(js as Uint8Array).toString('base64');
  if (/^MAP\(/.test(type))
    return (json) =>
      Array.isArray(json)
        ? Object.fromEntries(
            (json as { key: unknown; value: unknown }[]).map((e) => [String(e.key), e.value]),
          )
        : json;
  return (json) => json;
};

/** One column's cell from the raw value DuckDB's vector holds (null for NULL). */
type CellOf = (raw: DuckDBValue, type: DuckDBType) => unknown;

/**
 * How a column's raw values become cells. The JSON converter then the column's rule (`fromJsonFor`)
 * for every type; the plain ones (integers, floats, text, booleans: most results) straight from
 * the raw value, to the same cell without the two intermediate values per cell.
 */
export const cellOfColumn = (type: string): CellOf => {
  switch (type) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INTEGER':
    case 'UTINYINT':
    case 'USMALLINT':
    case 'UINTEGER':
      return (raw) => (raw === null ? null : Number(raw));
    case 'BIGINT':
    case 'UBIGINT':
    case 'HUGEINT':
    case 'UHUGEINT':
      return (raw) => {
        if (raw === null) return null;
        const n = Number(raw);
        return Number.isSafeInteger(n) ? n : String(raw);
      };
    case 'DOUBLE':
    case 'FLOAT':
      return (raw) => (typeof raw === 'number' && Number.isFinite(raw) ? raw : null);
    case 'VARCHAR':
      return (raw) => (raw === null ? null : String(raw));
    case 'BOOLEAN':
      return (raw) => (raw === null ? null : Boolean(raw));
  }
  const fromJson = fromJsonFor(type);
  const needsJs = type === 'BLOB' || type === 'TIMESTAMP WITH TIME ZONE';
  return (raw, vectorType) => {
    const json = JsonDuckDBValueConverter(raw, vectorType, JsonDuckDBValueConverter);
    if (json === null || json === undefined) return null;
    return fromJson(
      json,
      needsJs ? JSDuckDBValueConverter(raw, vectorType, JSDuckDBValueConverter) : undefined,
    );
  };
};

/**
 * Bytes of `JSON.stringify(cell)` as UTF-8, without building the text for the common cells
 * (numbers, booleans, null, text with nothing to escape); exact, so the cut point is the same.
 */
const jsonBytes = (cell: unknown): number => {
  if (cell === null || cell === undefined) return 4;
  if (typeof cell === 'number') {
    if (Number.isSafeInteger(cell)) return integerDigits(cell);
    return Number.isFinite(cell) ? String(cell).length : 4;
  }
  if (typeof cell === 'boolean') return cell ? 4 : 5;
  if (typeof cell === 'string') {
    const n = cell.length;
    let i = 0;
    for (; i < n; i++) {
      const c = cell.charCodeAt(i);
      if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) break;
    }
    if (i === n) return n + 2;
  }
  return Buffer.byteLength(JSON.stringify(cell));
};

/**
 * How many bytes of rows are converted between two calls of a reader's `check` within a chunk: a
 * chunk of 2,048 wide rows is itself many MiB of the heap (see `Duck.lookAtHeap`).
 */
const CHECK_EVERY_BYTES = 4 * 1024 * 1024;

/** What a query that failed after some of its rows were read answers instead of those rows. */
const failedWhileRead = (rows: number) =>
  new SqlError(
    SqlErrorCode.Internal,
    `The query failed while its rows were being read, after ${rows} rows; the engine's streaming reader does not give the reason (an error raised by a function on a later row, or memory past DUCKDB_MEMORY_LIMIT). No partial answer is given as if it were whole`,
  );

/**
 * A result's rows chunk by chunk as DuckDB computes them (a streaming result is computed as it is
 * read), each row converted as answers carry it, until the row limit or the answer-size limit
 * (bytes of the rows as UTF-8 JSON) would be passed: then `truncated()` says the rows were cut.
 */
export const resultRows = (
  result: DuckDBResult,
  limits: { rowLimit: number; maxBytes: number; check?: (holding: number) => void },
) => {
  const types = result.columnTypes().map(String);
  const cells = types.map(cellOfColumn);
  const width = types.length;
  // A row's brackets and commas, and the separator after it (see `jsonBytes`).
  const rowOverhead = 2 + Math.max(width - 1, 0) + 1;
  let rows = 0;
  let bytes = 0;
  let truncated = false;
  let done = false;
  /** `bytes` when `check` was last called within a chunk. */
  let checkedAt = 0;
  /** The next chunk's rows (as many as the limits leave), or undefined once the result is done or cut. */
  const next = async (): Promise<unknown[][] | undefined> => {
    if (done) return undefined;
    limits.check?.(bytes);
    const chunk = await result.fetchChunk();
    // An interrupted result reads as ended (an empty chunk), not as failed: `check` tells them apart.
    limits.check?.(bytes);
    const count = chunk ? chunk.rowCount : 0;
    if (!chunk || count === 0) {
      done = true;
      // A query failing after its first chunks (a function's error at row 500,000, memory) ends as
      // an empty chunk too; its result then says INVALID (the bindings give no reason). Without
      // this a JSON answer of 372,736 rows of a query that failed was answered whole, and cached.
      if (result.returnType === ResultReturnType.INVALID) throw failedWhileRead(rows);
      return undefined;
    }
    // Column by column: each column's reader is made once per chunk, not once per cell.
    const readers = types.map((type, c): ((row: number) => unknown) => {
      const plain = plainCells(chunk, c, type);
      if (plain) return plain;
      const vector = chunk.getColumnVector(c);
      const vectorType = vector.type;
      const cell = cells[c]!;
      return (r) => cell(vector.getItem(r), vectorType);
    });
    const converted: unknown[][] = [];
    for (let r = 0; r < count; r++) {
      if (rows >= limits.rowLimit) {
        truncated = done = true;
        break;
      }
      const row = new Array<unknown>(width);
      // The row as the answer will carry it, plus its separator.
      let size = rowOverhead;
      for (let c = 0; c < width; c++) {
        const cell = readers[c]!(r);
        row[c] = cell;
        size += jsonBytes(cell);
      }
      if (bytes + size > limits.maxBytes) {
        truncated = done = true;
        break;
      }
      bytes += size;
      rows++;
      converted.push(row);
      if (bytes - checkedAt >= CHECK_EVERY_BYTES) {
        checkedAt = bytes;
        limits.check?.(bytes);
      }
    }
    return converted.length > 0 ? converted : undefined;
  };
  return {
    column_names: result.columnNames(),
    column_types: types,
    next,
    truncated: () => truncated,
    bytes: () => bytes,
  };
};

/**
 * Reads a whole answer (see `resultRows`). `SELECT repeat('x', 6000) FROM range(100000)` was
 * read whole, then converted whole: 6.8 GB of memory and a 500.
 */
export const readAnswer = async (
  result: DuckDBResult,
  limits: { rowLimit: number; maxBytes: number; check?: (holding: number) => void },
) => {
  const rows = resultRows(result, limits);
  const data: unknown[][] = [];
  for (let chunk = await rows.next(); chunk; chunk = await rows.next())
    for (const row of chunk) data.push(row);
  return {
    column_names: rows.column_names,
    column_types: rows.column_types,
    data,
    truncated: rows.truncated(),
    bytes: rows.bytes(),
  };
};
