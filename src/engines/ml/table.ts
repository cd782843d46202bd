import type { RowTable } from '../../shared/sqlAnswers';
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

/** One source's cells of a column (the rows of one table): `cell(i)` for each `i` below `length`. */
type ColumnPart = { readonly length: number; readonly cell: (i: number) => unknown };

const numbersOnly = (part: ColumnPart) => {
  for (let i = 0; i < part.length; i++) {
    const v = part.cell(i);
    if (!(typeof v === 'number' || v === null || v === undefined)) return false;
  }
  return true;
};

/**
 * One column made from its parts, one after another: a Float64Array when every cell is a number or
 * missing (missing → NaN), else the cells as they are. A step is yielded after each pass over a
 * part (its cell count), so a caller may let the event loop in between; `made` runs it through.
 */
function* columnOf(parts: readonly ColumnPart[]): Generator<number, ColumnValues> {
  let numeric = true;
  for (const part of parts) {
    numeric &&= numbersOnly(part);
    yield part.length;
  }
  const out = numeric ? new Float64Array(parts.reduce((n, p) => n + p.length, 0)) : new Array<unknown>();
  let at = 0;
  for (const part of parts) {
    if (out instanceof Float64Array)
      for (let i = 0; i < part.length; i++) {
        const v = part.cell(i);
        out[at + i] = typeof v === 'number' ? v : NaN;
      }
    else for (let i = 0; i < part.length; i++) out[at + i] = part.cell(i);
    at += part.length;
    yield part.length;
  }
  return out;
}

const made = <T>(steps: Generator<number, T>): T => {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
};

/** Turns rows into columns (see `columnOf`). Columns are the first row's keys, as before. */
export const columnsFromRows = (rows: readonly Row[]): ColumnarData => {
  const columns = rows.length ? Object.keys(rows[0]!) : [];
  const data = columns.map((name) => made(columnOf([{ length: rows.length, cell: (i) => rows[i]![name] }])));
  return { columns, data };
};

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
  const columns = Object.keys(Object.fromEntries(first.names.map((name) => [name, true])));
  // Where each column's cells are in each table: a name's last place, as an object built from the row keeps.
  const places = tables.map((t) => {
    const at = new Map(t.names.map((name, i) => [name, i]));
    return columns.map((name) => at.get(name));
  });
  let cells = 0;
  const data: ColumnValues[] = [];
  for (let j = 0; j < columns.length; j++) {
    const parts = tables.map(({ rows }, k): ColumnPart => {
      const c = places[k]![j];
      return { length: rows.length, cell: c === undefined ? () => undefined : (i) => rows[i]![c] };
    });
    const steps = columnOf(parts);
    for (let step = steps.next(); ; step = steps.next()) {
      if (step.done) {
        data.push(step.value);
        break;
      }
      cells += step.value;
      if (cells >= CELLS_PER_TURN) {
        cells = 0;
        await nextTurn();
      }
    }
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
