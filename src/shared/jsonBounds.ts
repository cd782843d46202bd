/**
 * Bounds on free-form JSON (params, options, rows). Everything here is iterative: a value nested
 * thousands of levels deep is exactly what these functions exist to refuse (every recursive reader
 * of it, JSON.stringify included, overflows the stack), so none of them may recurse into it.
 */

type JsonLimits = {
  /** Deepest nesting of objects and arrays (a scalar is 0, `{}` is 1). */
  readonly maxDepth: number;
  /** Largest serialised size in bytes (UTF-8 JSON). */
  readonly maxBytes: number;
};

export type JsonViolation = {
  /** Where in the value, as keys and indexes from its root. */
  readonly path: readonly (string | number)[];
  readonly problem: 'depth' | 'bytes' | 'nul' | 'surrogate';
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
 * A UTF-16 surrogate without its partner is no Unicode text: UTF-8 cannot encode it, so DuckDB's
 * JSON reader refuses it and PostgreSQL's jsonb too. One accepted into the log could never be
 * projected (every later write waited behind it), so the contract refuses it as it refuses NUL.
 */
export const hasLoneSurrogate = (s: string) => !s.isWellFormed();

/** Text the log can hold as written: no NUL, no half of a surrogate pair. */
export const storableText = (s: string) => !hasNul(s) && !hasLoneSurrogate(s);

/** Text made storable for a record of it: a NUL or a half of a surrogate pair becomes U+FFFD. */
export const storableForm = (s: string) => {
  const whole = hasLoneSurrogate(s) ? s.toWellFormed() : s;
  return hasNul(whole) ? whole.replaceAll('\u0000', '\uFFFD') : whole;
};

/** What is wrong with one string of an event, if anything: NUL or a lone surrogate. */
const stringProblem = (s: string): { problem: 'nul' | 'surrogate'; what: string } | null =>
  hasNul(s)
    ? { problem: 'nul', what: 'a NUL character' }
    : hasLoneSurrogate(s)
      ? { problem: 'surrogate', what: 'a lone UTF-16 surrogate (not Unicode text)' }
      : null;

/**
 * The first way `value` breaks the limits, or null. The walk keeps its own stack and stops as soon
 * as a limit is crossed. NUL characters and lone surrogates are refused in keys and strings: PostgreSQL's
 * jsonb cannot store them (the append fails), DuckDB's JSON reader refuses a lone surrogate, and a
 * key becomes a column name in places where NUL is no name.
 */
export const jsonViolation = (value: unknown, limits: JsonLimits): JsonViolation | null => {
  let bytes = 0;
  const stack: Frame[] = [{ value, depth: 0, parent: null, key: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'string') {
      const bad = stringProblem(v);
      if (bad) return { path: pathOf(frame), problem: bad.problem, message: `holds ${bad.what}` };
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
          const bad = stringProblem(k);
          if (bad)
            return { path: pathOf(at), problem: bad.problem, message: `has a key holding ${bad.what}` };
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
