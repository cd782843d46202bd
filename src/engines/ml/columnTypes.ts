import { categoryKey, toNumber, type DType } from './dataset';
import { isNumericColumn, type ColumnValues } from './table';

const isMissing = (v: unknown) => v === null || v === undefined || (typeof v === 'string' && v.trim() === '');

/** Numbers read from cell arrays, kept while the array lives: inference and encoding share one parse. */
const parsed = new WeakMap<readonly unknown[], Float64Array>();

/** The column as numbers (NaN for missing or unreadable cells); typed Float64 input is not copied. */
export const numbersOf = (values: ColumnValues): Float64Array => {
  if (values instanceof Float64Array) return values;
  if (isNumericColumn(values)) return Float64Array.from(values);
  const cached = parsed.get(values);
  if (cached) return cached;
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = toNumber(values[i]);
  parsed.set(values, out);
  return out;
};

const DATE_LIKE = /^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?/;

/**
 * `inferType`'s decision for cells, stopping each test as soon as its outcome is known (a column of
 * words is not read to its end to learn it holds no numbers). Equal to `inferType` on every input
 * (a property test checks it).
 */
const inferCellsType = (values: readonly unknown[]): DType | null => {
  let present = 0;
  for (let i = 0; i < values.length; i++) if (!isMissing(values[i])) present++;
  if (present === 0) return null;
  const enough = present * (1 - 0.02);
  let failed = 0;
  let integers = true;
  let zeroOne = true;
  const numbers = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const n = toNumber(values[i]);
    numbers[i] = n;
    if (isMissing(values[i])) continue;
    if (n !== n) {
      if (present - ++failed < enough) break;
      continue;
    }
    if (integers && !Number.isInteger(n)) integers = false;
    if (zeroOne && n !== 0 && n !== 1) zeroOne = false;
  }
  if (present - failed >= enough) {
    parsed.set(values, numbers);
    return zeroOne ? 'binary' : integers ? 'integer' : 'float';
  }
  let notDates = 0;
  for (let i = 0; i < values.length && present - notDates >= enough; i++) {
    const v = values[i];
    if (isMissing(v)) continue;
    if (!(typeof v === 'string' && DATE_LIKE.test(v) && !Number.isNaN(Date.parse(v)))) notDates++;
  }
  if (present - notDates >= enough) return 'date';
  const words: number[] = [];
  for (let i = 0; i < values.length && words.length < 200; i++)
    if (!isMissing(values[i])) words.push(String(values[i]).trim().split(/\s+/).length);
  const averageWords = words.reduce((a, b) => a + b, 0) / words.length;
  // Distinct values matter up to 3 (binary or not) or, for wordy columns, up to half the cells.
  const limit = averageWords > 3 ? Math.max(3, Math.floor(present * 0.5) + 1) : 3;
  const distinct = new Set<string>();
  for (let i = 0; i < values.length && distinct.size < limit; i++)
    if (!isMissing(values[i])) distinct.add(String(values[i]).trim());
  if (distinct.size <= 2) return 'binary';
  return averageWords > 3 && distinct.size > present * 0.5 ? 'text' : 'categorical';
};

/**
 * A column's type, as `inferType` decides it. Typed numbers (NaN is a missing cell) take one pass;
 * cells stop each test early, and a numeric column's parsed numbers are kept for its encoding.
 */
export const inferColumnType = (values: ColumnValues): DType | null => {
  if (!isNumericColumn(values)) return inferCellsType(values);
  let present = 0;
  let integers = true;
  let zeroOne = true;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v !== v) continue;
    present++;
    if (integers && !Number.isInteger(v)) integers = false;
    if (zeroOne && v !== 0 && v !== 1) zeroOne = false;
  }
  if (present === 0) return null;
  return zeroOne ? 'binary' : integers ? 'integer' : 'float';
};

/** Category keys of the column (null when missing, a typed NaN included), as predictions read them. */
export const keysOf = (values: ColumnValues): (string | null)[] => {
  const out = new Array<string | null>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out[i] = typeof v === 'number' && v !== v ? null : categoryKey(v);
  }
  return out;
};

/** Distinct present numbers, counting stops past `limit` (then returns limit + 1). */
export const distinctNumbers = (numbers: Float64Array, limit: number) => {
  const seen = new Set<number>();
  for (let i = 0; i < numbers.length && seen.size <= limit; i++)
    if (numbers[i] === numbers[i]) seen.add(numbers[i]!);
  return seen.size;
};
