import type { Row } from './dataset';

/** Numbers of one column, NaN where missing: what training reads without per-row objects. */
export type NumericColumn =
  Float64Array | Float32Array | Int32Array | Int16Array | Int8Array | Uint32Array | Uint16Array | Uint8Array;
/** One column's cells: typed numbers, or any cell values (strings, booleans, null, numbers). */
export type ColumnValues = NumericColumn | readonly unknown[];

/**
 * Column-oriented training data: `data[j]` holds every value of `columns[j]`, all of one length.
 * Typed arrays travel to the training worker as transferable buffers, without copying.
 */
export type ColumnarData = { columns: string[]; data: ColumnValues[] };
/** What the engine trains on: rows of objects (adapted once) or columns. */
export type TrainingData = readonly Row[] | ColumnarData;

export const isColumnar = (d: TrainingData): d is ColumnarData => !Array.isArray(d);

export const isNumericColumn = (c: ColumnValues): c is NumericColumn => ArrayBuffer.isView(c);

export const rowCount = (d: ColumnarData) => d.data[0]?.length ?? 0;

/**
 * Turns rows into columns: a column whose cells are all numbers or missing becomes a Float64Array
 * (missing → NaN), any other keeps its values. Columns are the first row's keys, as before.
 */
export const columnsFromRows = (rows: readonly Row[]): ColumnarData => {
  const columns = rows.length ? Object.keys(rows[0]!) : [];
  const data = columns.map((name): ColumnValues => {
    let numeric = true;
    for (let i = 0; i < rows.length && numeric; i++) {
      const v = rows[i]![name];
      if (!(typeof v === 'number' || v === null || v === undefined)) numeric = false;
    }
    if (numeric) {
      const out = new Float64Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const v = rows[i]![name];
        out[i] = typeof v === 'number' ? v : NaN;
      }
      return out;
    }
    return rows.map((r) => r[name]);
  });
  return { columns, data };
};

/** The training data as columns, checked for a consistent shape. */
export const asColumnar = (d: TrainingData): ColumnarData => {
  if (!isColumnar(d)) return columnsFromRows(d);
  if (d.columns.length !== d.data.length)
    throw new Error(`${d.columns.length} column names for ${d.data.length} columns of data`);
  const n = rowCount(d);
  d.data.forEach((c, j) => {
    if (c.length !== n)
      throw new Error(`Column ${d.columns[j]} has ${c.length} values where others have ${n}`);
  });
  return d;
};

/** An ArrayBuffer of any realm (instanceof fails across vm contexts); SharedArrayBuffers are not moved. */
const isArrayBuffer = (b: ArrayBufferLike): b is ArrayBuffer =>
  Object.prototype.toString.call(b) === '[object ArrayBuffer]';

/** Buffers of typed columns, to hand to postMessage's transfer list (each buffer once). */
export const transferables = (d: ColumnarData): ArrayBuffer[] => {
  const seen = new Set<ArrayBuffer>();
  for (const c of d.data)
    if (isNumericColumn(c) && isArrayBuffer(c.buffer) && c.byteLength === c.buffer.byteLength)
      seen.add(c.buffer);
  return [...seen];
};

/** The cells of some rows as objects (small slices only: history windows, samples, tests). */
export const rowsOf = (d: ColumnarData, indices: ArrayLike<number>): Row[] =>
  Array.from({ length: indices.length }, (_, k) => {
    const row: Row = {};
    d.columns.forEach((name, j) => {
      const v = d.data[j]![indices[k]!];
      row[name] = typeof v === 'number' && Number.isNaN(v) ? null : v;
    });
    return row;
  });
