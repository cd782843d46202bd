import { JsonDuckDBValueConverter, JSDuckDBValueConverter, type DuckDBResult } from '@duckdb/node-api';

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

/**
 * One result cell as valid JSON with MindsDB's conventions: NaN and infinities are null, big
 * integers are numbers when JavaScript can hold them exactly (else strings), decimals are numbers,
 * dates are YYYY-MM-DD, timestamps YYYY-MM-DD HH:MM:SS.ffffff, blobs base64, nested types JSON.
 */
const convertCell = (type: string, json: unknown, js: unknown): unknown => {
  if (json === null || json === undefined) return null;
  if (isIntegerType(type)) return typeof json === 'string' ? safeInteger(json) : json;
  if (/^DECIMAL/.test(type)) return Number(json);
  if (/^(DOUBLE|FLOAT|REAL)$/.test(type))
    return typeof json === 'number' && Number.isFinite(json) ? json : null;
  if (type === 'TIMESTAMP WITH TIME ZONE') {
    const d = js instanceof Date ? js : new Date(String(json));
    return Number.isFinite(d.getTime())
      ? microsTimestamp(d.toISOString().replace('T', ' ').replace('Z', ''))
      : String(json);
  }
  if (/^TIMESTAMP/.test(type)) return microsTimestamp(String(json));
  if (type === 'BLOB') return Buffer.from(js as Uint8Array).toString('base64');
  if (/^MAP\(/.test(type) && Array.isArray(json))
    return Object.fromEntries(
      (json as { key: unknown; value: unknown }[]).map((e) => [String(e.key), e.value]),
    );
  return json;
};

/**
 * Reads a result chunk by chunk (DuckDB computes a streaming result as it is read), converting
 * each row, until the row limit or the answer-size limit (bytes of the rows as UTF-8 JSON) would
 * be passed: then the answer says it was cut. `SELECT repeat('x', 6000) FROM range(100000)` was
 * read whole, then converted whole: 6.8 GB of memory and a 500.
 */
export const readAnswer = async (
  result: DuckDBResult,
  limits: { rowLimit: number; maxBytes: number; check?: () => void },
) => {
  const types = result.columnTypes().map(String);
  const names = result.columnNames();
  const needsJs = types.some((t) => t === 'BLOB' || t === 'TIMESTAMP WITH TIME ZONE');
  const data: unknown[][] = [];
  let bytes = 0;
  let truncated = false;
  reading: for (;;) {
    limits.check?.();
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const json = chunk.convertRows(JsonDuckDBValueConverter);
    const js = needsJs ? chunk.convertRows(JSDuckDBValueConverter) : undefined;
    for (let r = 0; r < json.length; r++) {
      if (data.length >= limits.rowLimit) {
        truncated = true;
        break reading;
      }
      const row = json[r]!.map((cell, c) => convertCell(types[c]!, cell, js?.[r]?.[c]));
      // The row as the answer will carry it, plus its separator.
      const size = Buffer.byteLength(JSON.stringify(row)) + 1;
      if (bytes + size > limits.maxBytes) {
        truncated = true;
        break reading;
      }
      bytes += size;
      data.push(row);
    }
  }
  return { column_names: names, column_types: types, data, truncated, bytes };
};
