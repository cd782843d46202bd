/*
 * Walking a JSON value's tree without recursion (its own stack: event data and request bodies may
 * be deep), and copying it safely: one way for every walker in the house.
 */

export type Container = unknown[] | Record<string, unknown>;

export const isContainer = (v: unknown): v is Container => v !== null && typeof v === 'object';

/** An array's items by index, an object's by key. */
export const entriesOf = (c: Container): [string | number, unknown][] =>
  Array.isArray(c) ? c.map((v, i) => [i, v]) : Object.entries(c);

/** An empty container of `c`'s kind (an array as long as it). */
export const emptyLike = (c: Container): Container => (Array.isArray(c) ? new Array<unknown>(c.length) : {});

export const setKey = (target: Container, key: string | number, value: unknown) => {
  // A plain assignment of "__proto__" would set the prototype instead of a key.
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string | number, unknown>)[key] = value;
};

/** A deep copy of `value` with each leaf (what `isBranch` does not walk into) mapped by `leaf`. */
export const mapLeaves = (
  value: unknown,
  leaf: (v: unknown) => unknown,
  isBranch: (v: unknown) => v is Container = isContainer,
): unknown => {
  if (!isBranch(value)) return leaf(value);
  const root = emptyLike(value);
  const pending: { source: Container; target: Container }[] = [{ source: value, target: root }];
  while (pending.length > 0) {
    const { source, target } = pending.pop()!;
    for (const [key, v] of entriesOf(source)) {
      if (!isBranch(v)) setKey(target, key, leaf(v));
      else {
        const copy = emptyLike(v);
        setKey(target, key, copy);
        pending.push({ source: v, target: copy });
      }
    }
  }
  return root;
};
