/** Column types the engine infers, as Lightwood names them. */
export type DType = 'integer' | 'float' | 'binary' | 'categorical' | 'date' | 'text';
export type Row = Record<string, unknown>;

/** A numeric reading of a cell: NaN when missing or unreadable ("640,56" is not a number). */
export const toNumber = (v: unknown): number => {
  if (typeof v === 'number') return Number.isFinite(v) ? v : NaN;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'string') return NaN;
  const s = v.trim();
  if (!s || !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return NaN;
  return Number(s);
};

const isMissing = (v: unknown) => v === null || v === undefined || (typeof v === 'string' && v.trim() === '');
const DATE_LIKE = /^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?/;
/** A column keeps a numeric or date type when at most this share of its cells do not fit. */
const TOLERANCE = 0.02;

export const categoryKey = (v: unknown) => (isMissing(v) ? null : String(v).trim());

/** Infers each column's type from the training rows, tolerating a few invalid cells. */
export const inferType = (values: readonly unknown[]): DType | null => {
  const present = values.filter((v) => !isMissing(v));
  if (present.length === 0) return null;
  const numbers = present.map(toNumber);
  const numeric = numbers.filter((n) => !Number.isNaN(n));
  if (numeric.length >= present.length * (1 - TOLERANCE)) {
    const distinct = new Set(numeric);
    if (distinct.size <= 2 && [...distinct].every((n) => n === 0 || n === 1)) return 'binary';
    return numeric.every((n) => Number.isInteger(n)) ? 'integer' : 'float';
  }
  const dates = present.filter(
    (v) => typeof v === 'string' && DATE_LIKE.test(v) && !Number.isNaN(Date.parse(v)),
  );
  if (dates.length >= present.length * (1 - TOLERANCE)) return 'date';
  const distinct = new Set(present.map((v) => String(v).trim()));
  if (distinct.size <= 2) return 'binary';
  const words = present.slice(0, 200).map((v) => String(v).trim().split(/\s+/).length);
  const averageWords = words.reduce((a, b) => a + b, 0) / words.length;
  return averageWords > 3 && distinct.size > present.length * 0.5 ? 'text' : 'categorical';
};

/** How one input column becomes numeric features. */
export type ColumnEncoding =
  | { column: string; dtype: 'integer' | 'float'; kind: 'number' }
  | { column: string; dtype: 'binary' | 'categorical'; kind: 'onehot'; values: string[] }
  | { column: string; dtype: 'date'; kind: 'date' }
  | { column: string; dtype: 'text'; kind: 'hash'; buckets: number }
  /**
   * One feature: the category's smoothed mean target on the training split (positive-class rate
   * for two classes), `fallback` for rare or unseen categories, NaN when missing. Schema 2 only.
   */
  | {
      column: string;
      dtype: 'binary' | 'categorical';
      kind: 'target';
      values: string[];
      means: number[];
      fallback: number;
    };

const MAX_CATEGORIES = 30;
const HASH_BUCKETS = 32;

const hash = (s: string) => {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
};

export const planEncoding = (column: string, dtype: DType, values: readonly unknown[]): ColumnEncoding => {
  switch (dtype) {
    case 'integer':
    case 'float':
      return { column, dtype, kind: 'number' };
    case 'date':
      return { column, dtype, kind: 'date' };
    case 'text':
      return { column, dtype, kind: 'hash', buckets: HASH_BUCKETS };
    case 'binary':
    case 'categorical': {
      const counts = new Map<string, number>();
      for (const v of values) {
        const k = categoryKey(v);
        if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      // Most frequent first, ties by value: deterministic.
      const ordered = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      return { column, dtype, kind: 'onehot', values: ordered.slice(0, MAX_CATEGORIES).map(([k]) => k) };
    }
  }
};

export const featureNames = (e: ColumnEncoding): string[] => {
  switch (e.kind) {
    case 'number':
      return [e.column];
    case 'date':
      return [`${e.column}:year`, `${e.column}:month`, `${e.column}:weekday`, `${e.column}:days`];
    case 'hash':
      return Array.from({ length: e.buckets }, (_, i) => `${e.column}:h${i}`);
    case 'onehot':
      return e.values.map((v) => `${e.column}=${v}`);
    case 'target':
      return [e.column];
  }
};

/** Writes one row's features into `out` at `offset`; returns the next offset. */
export const encodeInto = (e: ColumnEncoding, value: unknown, out: Float64Array, offset: number): number => {
  switch (e.kind) {
    case 'number':
      out[offset] = toNumber(value);
      return offset + 1;
    case 'date': {
      const t = isMissing(value) ? NaN : Date.parse(String(value));
      if (Number.isNaN(t)) out.fill(NaN, offset, offset + 4);
      else {
        const d = new Date(t);
        out[offset] = d.getUTCFullYear();
        out[offset + 1] = d.getUTCMonth() + 1;
        out[offset + 2] = d.getUTCDay();
        out[offset + 3] = Math.floor(t / 86_400_000);
      }
      return offset + 4;
    }
    case 'hash': {
      out.fill(0, offset, offset + e.buckets);
      if (!isMissing(value))
        for (const word of String(value).toLowerCase().split(/\W+/).filter(Boolean))
          out[offset + (hash(word) % e.buckets)]! += 1;
      return offset + e.buckets;
    }
    case 'onehot': {
      const k = categoryKey(value);
      for (let i = 0; i < e.values.length; i++) out[offset + i] = k === e.values[i] ? 1 : 0;
      return offset + e.values.length;
    }
    case 'target': {
      const k = categoryKey(value);
      const at = k === null ? -1 : e.values.indexOf(k);
      out[offset] = k === null ? NaN : at < 0 ? e.fallback : e.means[at]!;
      return offset + 1;
    }
  }
};

export type Featurizer = { encodings: ColumnEncoding[]; width: number; names: string[] };

export const makeFeaturizer = (encodings: ColumnEncoding[]): Featurizer => {
  const names = encodings.flatMap(featureNames);
  return { encodings, width: names.length, names };
};

/**
 * Rows held as columns: `length` rows, and a column's values by name (undefined when no row has the
 * column: every cell is missing). Predictions read their inputs this way, so a batch read from DuckDB
 * column by column never becomes row objects.
 */
export type ColumnBatch = {
  readonly length: number;
  column: (name: string) => ArrayLike<unknown> | undefined;
};

/** Row objects seen as a column batch (each column gathered once, on first use). */
export const batchOfRows = (rows: readonly Row[]): ColumnBatch => {
  const columns = new Map<string, unknown[]>();
  return {
    length: rows.length,
    column: (name) => {
      let values = columns.get(name);
      if (!values) columns.set(name, (values = rows.map((row) => row[name])));
      return values;
    },
  };
};

/** Row-major feature matrix for a batch. */
export const featurize = (f: Featurizer, batch: ColumnBatch): Float64Array => {
  const n = batch.length;
  const out = new Float64Array(n * f.width);
  let start = 0;
  for (const e of f.encodings) {
    const values = batch.column(e.column);
    for (let r = 0; r < n; r++) encodeInto(e, values?.[r], out, r * f.width + start);
    start += featureNames(e).length;
  }
  return out;
};
