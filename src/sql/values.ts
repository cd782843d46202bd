import type { DuckDBResultReader } from '@duckdb/node-api';

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

export const readTable = (reader: DuckDBResultReader, limit: number) => {
  const types = reader.columnTypes().map(String);
  const needsJs = types.some((t) => t === 'BLOB' || t === 'TIMESTAMP WITH TIME ZONE');
  const json = reader.getRowsJson();
  const js = needsJs ? reader.getRowsJS() : undefined;
  const rows = json
    .slice(0, limit)
    .map((row, r) => row.map((cell, c) => convertCell(types[c]!, cell, js?.[r]?.[c])));
  return { column_types: types, data: rows, truncated: json.length > limit };
};
