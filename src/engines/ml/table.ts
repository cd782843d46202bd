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

/** Rows read by a query, as arrays beside its column names. */
export type RowTable = { names: readonly string[]; rows: readonly (readonly unknown[])[] };

/** How many cells are turned into columns between two yields to the event loop. */
const CELLS_PER_TURN = 1 << 20;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Turns tables read one after another (a fine-tuned version's prior data, then its own) into
 * columns, as `columnsFromRows` turns the same rows made objects: the columns are the first
 * non-empty table's names in the order an object keeps its keys, a name given twice is one column
 * holding its last cells, and a later table lacking a column leaves it missing. It yields to the
 * event loop every CELLS_PER_TURN cells: 1M rows of 10 columns made objects, then columns, held
 * the loop 1.2 s, and other requests met ECONNRESET.
 */
export const columnsFromTables = async (tables: readonly RowTable[]): Promise<ColumnarData> => {
  const first = tables.find((t) => t.rows.length > 0);
  if (!first) return { columns: [], data: [] };
  // Where each name's cells are in a table: its last place, as an object built from the row keeps.
  const placesIn = (t: RowTable) => new Map(t.names.map((name, i) => [name, i]));
  const columns = Object.keys(Object.fromEntries(first.names.map((name) => [name, true])));
  const sources = tables.map((t) => {
    const places = placesIn(t);
    return { rows: t.rows, at: columns.map((name) => places.get(name) ?? -1) };
  });
  const total = sources.reduce((n, s) => n + s.rows.length, 0);
  let cells = 0;
  const pace = async (n: number) => {
    cells += n;
    if (cells >= CELLS_PER_TURN) {
      cells = 0;
      await nextTurn();
    }
  };
  const data: ColumnValues[] = [];
  for (let j = 0; j < columns.length; j++) {
    let numeric = true;
    for (const { rows, at } of sources) {
      const c = at[j]!;
      if (c < 0) continue;
      for (let i = 0; i < rows.length && numeric; i++) {
        const v = rows[i]![c];
        if (!(typeof v === 'number' || v === null || v === undefined)) numeric = false;
      }
      await pace(rows.length);
    }
    const out: Float64Array | unknown[] = numeric ? new Float64Array(total) : new Array<unknown>(total);
    let k = 0;
    for (const { rows, at } of sources) {
      const c = at[j]!;
      for (let i = 0; i < rows.length; i++, k++) {
        const v = c < 0 ? undefined : rows[i]![c];
        out[k] = numeric ? (typeof v === 'number' ? v : NaN) : v;
      }
      await pace(rows.length);
    }
    data.push(out);
  }
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
