import type { Response } from 'express';

/** An array of at least this many items is written in slices (`sendSlicedJson`). */
export const SLICED_ARRAY_ITEMS = 1000;

/**
 * About how many characters each slice's text holds: well under V8's largest regular heap object
 * (128 KiB). A longer string is allocated in its own mapping, whose pages the kernel faults in one
 * by one and takes back when it is freed; `res.json` of a 10,000-row prediction (6.3 MB of text)
 * spent 60 ms of a 230 ms request there, on the string and on the Buffer made from it. In slices of
 * about 64 KB the same text costs a third of that.
 */
const SLICE_CHARS = 64 * 1024;

const isLong = (value: unknown): value is readonly unknown[] =>
  Array.isArray(value) && value.length >= SLICED_ARRAY_ITEMS;

/** A plain object (what JSON.stringify writes field by field, no toJSON of its own). */
const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && !('toJSON' in value);
};

/**
 * Whether `body` is worth writing in slices: a long array (a batch's predictions), or a plain object
 * holding one as a field (the SQL endpoint's `data`).
 */
export const holdsLongArray = (body: unknown): boolean =>
  isLong(body) || (isPlainObject(body) && Object.values(body).some(isLong));

/** How many items the next slice of `sliceTexts` takes, learnt from the text of the last. */
export type SliceState = { count: number };

/**
 * `items` as JSON arrays of consecutive items (`[…]`, each item as JSON.stringify writes it in an
 * array: undefined → null), each about SLICE_CHARS long. The first slice measures how long an item's
 * text is; each next slice's count follows from the last (kept in `state` across calls, so the slices
 * of a stream of chunks need no new measure per chunk). At least one item per slice.
 */
export function* sliceTexts(items: readonly unknown[], state: SliceState = { count: 64 }): Generator<string> {
  for (let i = 0; i < items.length;) {
    // A chunk of a stream that fits in one slice (narrow rows) is written as it is, not copied.
    const slice = i === 0 && items.length <= state.count ? items : items.slice(i, i + state.count);
    const text = JSON.stringify(slice);
    yield text;
    i += slice.length;
    state.count = Math.max(1, Math.floor((slice.length * SLICE_CHARS) / text.length));
  }
}

/** Writes `items` as JSON.stringify writes an array, a slice of about SLICE_CHARS at a time. */
const writeArray = (res: Response, items: readonly unknown[]) => {
  res.write('[');
  let first = true;
  for (const text of sliceTexts(items)) {
    res.write(first ? text.slice(1, -1) : `,${text.slice(1, -1)}`);
    first = false;
  }
  res.write(']');
};

/**
 * Writes `body` (one `holdsLongArray` accepts) as the same text `res.json` writes, its long arrays in
 * slices: no string or buffer the size of the whole answer is made. The socket is corked meanwhile,
 * so the slices still leave in one write. No Content-Length (chunked), and no ETag made from the text
 * (the caller keeps `res.json` for GET and HEAD, whose ETag answers a conditional GET).
 */
export const sendSlicedJson = (res: Response, status: number, body: unknown) => {
  res.status(status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.socket?.cork();
  if (Array.isArray(body)) writeArray(res, body);
  else {
    res.write('{');
    let first = true;
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      const long = isLong(value);
      // As JSON.stringify: a field whose value has no JSON (undefined, a function) is left out.
      const text = long ? '' : (JSON.stringify(value) as string | undefined);
      if (text === undefined) continue;
      res.write(`${first ? '' : ','}${JSON.stringify(key)}:${text}`);
      first = false;
      if (long) writeArray(res, value);
    }
    res.write('}');
  }
  res.end();
  res.socket?.uncork();
};
