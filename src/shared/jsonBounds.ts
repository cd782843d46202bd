/**
 * Bounds on free-form JSON (params, options, rows). Everything here is iterative: a value nested
 * thousands of levels deep is exactly what these functions exist to refuse (every recursive reader
 * of it, JSON.stringify included, overflows the stack), so none of them may recurse into it.
 */

export type JsonLimits = {
  /** Deepest nesting of objects and arrays (a scalar is 0, `{}` is 1). */
  readonly maxDepth: number;
  /** Largest serialised size in bytes (UTF-8 JSON). */
  readonly maxBytes: number;
};

export type JsonViolation = {
  /** Where in the value, as keys and indexes from its root. */
  readonly path: readonly (string | number)[];
  readonly problem: 'depth' | 'bytes' | 'nul';
  readonly message: string;
};

type Frame = { value: unknown; depth: number; parent: Frame | null; key: string | number | null };

const pathOf = (frame: Frame): (string | number)[] => {
  const path: (string | number)[] = [];
  for (let f: Frame | null = frame; f && f.key !== null; f = f.parent) path.push(f.key);
  return path.reverse();
};

/** Bytes of a string as JSON text: quotes plus escapes (control characters take up to 6). */
const jsonStringBytes = (s: string) => {
  let escapes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20) escapes += 5;
    else if (c === 0x22 || c === 0x5c) escapes += 1;
  }
  return Buffer.byteLength(s, 'utf8') + escapes + 2;
};

const hasNul = (s: string) => s.includes('\u0000');

/**
 * The first way `value` breaks the limits, or null. The walk keeps its own stack and stops as soon
 * as a limit is crossed. NUL characters are refused in keys and strings: PostgreSQL's jsonb cannot
 * store them (the append fails), and a key becomes a column name in places where NUL is no name.
 */
export const jsonViolation = (value: unknown, limits: JsonLimits): JsonViolation | null => {
  let bytes = 0;
  const stack: Frame[] = [{ value, depth: 0, parent: null, key: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'string') {
      if (hasNul(v)) return { path: pathOf(frame), problem: 'nul', message: 'holds a NUL character' };
      bytes += jsonStringBytes(v);
    } else if (typeof v === 'number') bytes += Number.isFinite(v) ? String(v).length : 4;
    else if (typeof v === 'boolean') bytes += v ? 4 : 5;
    else if (v !== null && typeof v === 'object') {
      const depth = frame.depth + 1;
      if (depth > limits.maxDepth)
        return {
          path: pathOf(frame),
          problem: 'depth',
          message: `is nested deeper than ${limits.maxDepth} levels`,
        };
      bytes += 2;
      if (Array.isArray(v)) {
        bytes += Math.max(0, v.length - 1);
        for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth, parent: frame, key: i });
      } else {
        const entries = Object.entries(v as Record<string, unknown>);
        bytes += Math.max(0, entries.length - 1);
        for (let i = entries.length - 1; i >= 0; i--) {
          const [k, child] = entries[i]!;
          const at: Frame = { value: child, depth, parent: frame, key: k };
          if (hasNul(k))
            return { path: pathOf(at), problem: 'nul', message: 'has a key holding a NUL character' };
          bytes += jsonStringBytes(k) + 1;
          stack.push(at);
        }
      }
    } else bytes += 4; // null, or what JSON writes as null
    if (bytes > limits.maxBytes)
      return { path: [], problem: 'bytes', message: `is larger than ${limits.maxBytes} bytes as JSON` };
  }
  return null;
};

/** `params.a.b[3]` for messages; a path longer than `shown` keys ends in `…`. */
export const describePath = (path: readonly (string | number)[], shown = 8) =>
  path
    .slice(0, shown)
    .reduce<string>(
      (out, key) =>
        typeof key === 'number'
          ? `${out}[${key}]`
          : /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
            ? `${out}${out ? '.' : ''}${key}`
            : `${out}[${JSON.stringify(key)}]`,
      '',
    ) + (path.length > shown ? '…' : '');
