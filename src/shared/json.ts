const toSafeScalar = (value: unknown): unknown => {
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value instanceof Date) return value.toISOString();
  return value;
};

type Container = unknown[] | Record<string, unknown>;
const isContainer = (value: unknown): value is Container =>
  value !== null && typeof value === 'object' && !(value instanceof Date);

/**
 * JSON for HTTP bodies: bigint becomes a number when it is a safe integer, else a string,
 * so clients never receive a value JavaScript would silently round. Iterative (its own stack),
 * so no value is too deep to convert.
 */
export const toJsonSafe = (value: unknown): unknown => {
  if (!isContainer(value)) return toSafeScalar(value);
  const copyOf = (v: Container): Container => (Array.isArray(v) ? new Array<unknown>(v.length) : {});
  const root = copyOf(value);
  const pending: { source: Container; target: Container }[] = [{ source: value, target: root }];
  while (pending.length > 0) {
    const { source, target } = pending.pop()!;
    const entries: [string | number, unknown][] = Array.isArray(source)
      ? source.map((v, i) => [i, v])
      : Object.entries(source);
    for (const [key, v] of entries) {
      let out: unknown;
      if (isContainer(v)) {
        out = copyOf(v);
        pending.push({ source: v, target: out as Container });
      } else out = toSafeScalar(v);
      // A plain assignment of "__proto__" would set the prototype instead of a key.
      if (key === '__proto__')
        Object.defineProperty(target, key, {
          value: out,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else (target as Record<string | number, unknown>)[key] = out;
    }
  }
  return root;
};
