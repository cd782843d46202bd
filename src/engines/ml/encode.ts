/**
 * Schema-2 feature encoding. Training encodes column by column into one Float64Array per feature
 * (numbers already typed are not copied); prediction encodes rows into a row-major matrix with
 * lookup maps built once per model. Both read cells with the same functions, so a row gives the
 * same features at training and at prediction.
 */
import { keysOf, numbersOf } from './columnTypes';
import {
  categoryKey,
  encodeInto,
  featureNames,
  planEncoding,
  toNumber,
  type ColumnBatch,
  type ColumnEncoding,
  type DType,
} from './dataset';
import { isNumericColumn, type ColumnValues } from './table';

/** Categories seen fewer times than this on the training split share the fallback value. */
const MIN_CATEGORY_ROWS = 5;
const MAX_TARGET_CATEGORIES = 254;
/** Smoothing of category means towards the overall mean, in rows. */
const SMOOTHING = 10;

/** A cell's category key; a NaN number is a missing cell, not the category "NaN". */
export const cellKey = (v: unknown) => (typeof v === 'number' && v !== v ? null : categoryKey(v));

const gather = (values: Float64Array, rows: Int32Array | null) => {
  if (!rows) return values;
  const out = new Float64Array(rows.length);
  for (let k = 0; k < rows.length; k++) out[k] = values[rows[k]!]!;
  return out;
};

/**
 * Plans a categorical input as its smoothed mean target on the training rows: one feature that
 * trees split as finely as one-hot columns would, at the cost of one.
 * `keys` and `target` are indexed by usable row; `train` selects the training rows among them.
 */
const planTargetEncoding = (
  column: string,
  dtype: 'binary' | 'categorical',
  keys: readonly (string | null)[],
  target: Float64Array,
  train: Int32Array,
): ColumnEncoding => {
  const sums = new Map<string, { n: number; s: number }>();
  let total = 0;
  for (const i of train) total += target[i]!;
  const prior = train.length ? total / train.length : 0;
  for (const i of train) {
    const k = keys[i];
    if (k === null || k === undefined) continue;
    const e = sums.get(k);
    if (e) {
      e.n++;
      e.s += target[i]!;
    } else sums.set(k, { n: 1, s: target[i]! });
  }
  // Most frequent first, ties by value: deterministic.
  const ordered = [...sums.entries()].sort((a, b) => b[1].n - a[1].n || (a[0] < b[0] ? -1 : 1));
  const kept = ordered.filter(([, e]) => e.n >= MIN_CATEGORY_ROWS).slice(0, MAX_TARGET_CATEGORIES);
  let restN = 0;
  let restS = 0;
  for (const [, e] of ordered.slice(kept.length)) {
    restN += e.n;
    restS += e.s;
  }
  const smooth = (s: number, n: number) => (s + SMOOTHING * prior) / (n + SMOOTHING);
  return {
    column,
    dtype,
    kind: 'target',
    values: kept.map(([k]) => k),
    means: kept.map(([, e]) => smooth(e.s, e.n)),
    fallback: smooth(restS, restN),
  };
};

export type EncodingTask = { kind: 'regression' } | { kind: 'classification'; classes: number };

/**
 * How each input column becomes features. Categorical inputs are target-encoded for numbers and
 * two classes; with more classes there is no single mean to order them by, so they stay one-hot.
 */
export const planEncodings = (
  columns: readonly { name: string; dtype: DType }[],
  values: (name: string) => ColumnValues,
  usable: Int32Array | null,
  target: Float64Array,
  train: Int32Array,
  task: EncodingTask,
): ColumnEncoding[] =>
  columns.map(({ name, dtype }) => {
    if (dtype !== 'binary' && dtype !== 'categorical') return planEncoding(name, dtype, []);
    const all = keysOf(values(name));
    const keys = usable ? Array.from(usable, (i) => all[i]!) : all;
    if (task.kind === 'regression' || task.classes === 2)
      return planTargetEncoding(name, dtype, keys, target, train);
    return planEncoding(name, dtype, keys);
  });

/** Feature columns (one Float64Array per feature) for the rows `usable` of the data (null: all rows). */
export const encodeColumns = (
  encodings: readonly ColumnEncoding[],
  values: (name: string) => ColumnValues,
  usable: Int32Array | null,
): Float64Array[] => {
  const out: Float64Array[] = [];
  for (const e of encodings) {
    const column = values(e.column);
    switch (e.kind) {
      case 'number':
        out.push(gather(numbersOf(column), usable));
        break;
      case 'target': {
        const index = new Map(e.values.map((v, j) => [v, e.means[j]!]));
        const n = usable ? usable.length : column.length;
        const x = new Float64Array(n);
        for (let k = 0; k < n; k++) {
          const key = cellKey(column[usable ? usable[k]! : k]);
          x[k] = key === null ? NaN : (index.get(key) ?? e.fallback);
        }
        out.push(x);
        break;
      }
      case 'onehot':
      case 'date':
      case 'hash': {
        // Wider encodings go through the row encoder one cell at a time, then are transposed.
        const width = featureNames(e).length;
        const n = usable ? usable.length : column.length;
        const cols = Array.from({ length: width }, () => new Float64Array(n));
        const cell = new Float64Array(width);
        for (let k = 0; k < n; k++) {
          const raw = column[usable ? usable[k]! : k];
          encodeInto(e, isNumericColumn(column) && raw !== raw ? null : raw, cell, 0);
          for (let j = 0; j < width; j++) cols[j]![k] = cell[j]!;
        }
        out.push(...cols);
        break;
      }
    }
  }
  return out;
};

/**
 * The encoder for prediction: row-major features of a column batch, column by column, category
 * lookups by map built once per model.
 */
export const makeBatchEncoder = (encodings: readonly ColumnEncoding[]) => {
  const names = encodings.flatMap(featureNames);
  const width = names.length;
  const lookups = encodings.map((e) =>
    e.kind === 'target'
      ? new Map(e.values.map((v, j) => [v, e.means[j]!]))
      : e.kind === 'onehot'
        ? new Map(e.values.map((v, j) => [v, j]))
        : null,
  );
  const encode = (batch: ColumnBatch): Float64Array => {
    const n = batch.length;
    const out = new Float64Array(n * width);
    let start = 0;
    for (let j = 0; j < encodings.length; j++) {
      const e = encodings[j]!;
      const values = batch.column(e.column);
      const cell = (r: number) => values?.[r];
      switch (e.kind) {
        case 'number':
          for (let r = 0, at = start; r < n; r++, at += width) out[at] = toNumber(cell(r));
          start += 1;
          break;
        case 'target': {
          const lookup = lookups[j] as Map<string, number>;
          for (let r = 0, at = start; r < n; r++, at += width) {
            const key = cellKey(cell(r));
            out[at] = key === null ? NaN : (lookup.get(key) ?? e.fallback);
          }
          start += 1;
          break;
        }
        case 'onehot': {
          const lookup = lookups[j] as Map<string, number>;
          for (let r = 0, at = start; r < n; r++, at += width) {
            const key = cellKey(cell(r));
            const hot = key === null ? undefined : lookup.get(key);
            if (hot !== undefined) out[at + hot] = 1;
          }
          start += e.values.length;
          break;
        }
        case 'date':
        case 'hash':
          for (let r = 0, at = start; r < n; r++, at += width) encodeInto(e, cell(r), out, at);
          start += featureNames(e).length;
          break;
      }
    }
    return out;
  };
  return { encode, width, names };
};
