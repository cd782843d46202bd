/**
 * DuckDB's memory_limit bounds its buffer manager (hash tables, sorts, aggregates' states,
 * materialised results), not the values a scalar function makes: `repeat('a', 600000000)` took
 * 600 MB outside any limit, `range(100000000)` as a list 9 GB, each in one call that no interrupt
 * stops. The functions that make a value from a size argument are shadowed on every reader by
 * temporary macros that refuse a value past `maxValueBytes` (SQL_MAX_VALUE_BYTES) before the
 * built-in (`system.main.<name>`) makes it; everything else grows with its inputs. A query may not
 * call the built-ins by their qualified names (src/sql/scope.ts).
 */

/** Functions shadowed by a guard here: a call qualified by schema or catalog would bypass it. */
export const GUARDED_FUNCTIONS: ReadonlySet<string> = new Set([
  'repeat',
  'lpad',
  'rpad',
  'range',
  'generate_series',
  'list_resize',
  'array_resize',
]);

/** The message of a refused value: src/sql/errors.ts knows it by `VALUE_TOO_LARGE`. */
export const VALUE_TOO_LARGE = 'would make a value larger than';

export const valueGuardMacros = (maxValueBytes: number): string[] => {
  const max = Math.max(1, Math.floor(maxValueBytes));
  const guarded = (fn: string, size: string, call: string) =>
    `CASE WHEN (${size}) > ${max} THEN error('${fn}() ${VALUE_TOO_LARGE} ${max} bytes (SQL_MAX_VALUE_BYTES)') ELSE system.main.${call} END`;
  // Text, blob or list: its text form is at least as long as the value (a list's is longer).
  const repeatSize = 'greatest(CAST(k AS HUGEINT), 0) * greatest(strlen(CAST(s AS VARCHAR)), 1)';
  const count = (x: string) => `TRY_CAST(${x} AS DOUBLE)`;
  // A list's items (8 bytes or more each); NULL (timestamps, intervals) is not guarded.
  const rangeMacro = (fn: string) =>
    `CREATE OR REPLACE TEMP MACRO ${fn}(a) AS ${guarded(fn, `8 * ${count('a')}`, `${fn}(a)`)},
       (a, b) AS ${guarded(fn, `8 * (${count('b')} - ${count('a')})`, `${fn}(a, b)`)},
       (a, b, c) AS ${guarded(fn, `8 * (${count('b')} - ${count('a')}) / abs(${count('c')})`, `${fn}(a, b, c)`)}`;
  const resize = (fn: string) =>
    `CREATE OR REPLACE TEMP MACRO ${fn}(l, k) AS ${guarded(fn, '8 * CAST(k AS HUGEINT)', `${fn}(l, k)`)},
       (l, k, v) AS ${guarded(fn, '8 * CAST(k AS HUGEINT)', `${fn}(l, k, v)`)}`;
  return [
    `CREATE OR REPLACE TEMP MACRO repeat(s, k) AS ${guarded('repeat', repeatSize, 'repeat(s, k)')}`,
    `CREATE OR REPLACE TEMP MACRO lpad(s, k, p) AS ${guarded('lpad', 'CAST(k AS HUGEINT)', 'lpad(s, k, p)')}`,
    `CREATE OR REPLACE TEMP MACRO rpad(s, k, p) AS ${guarded('rpad', 'CAST(k AS HUGEINT)', 'rpad(s, k, p)')}`,
    rangeMacro('range'),
    rangeMacro('generate_series'),
    resize('list_resize'),
    resize('array_resize'),
  ];
};

/**
 * printf's and format's width and precision come from the format text: `printf('%0600000000d', 1)`
 * is 600 MB. A constant format asking for a width of a million or more is refused (a `*` width too).
 */
export const oversizedFormat = (fn: string, format: string): boolean => {
  const name = fn.toLowerCase();
  if (name === 'printf' || name === 'sprintf') return /%[-+ #0']*(\*|\d{7,}|\.\d{7,}|\d*\.\*)/.test(format);
  if (name === 'format') return /\{[^{}:]*:[^{}]*(\d{7,}|\{)/.test(format);
  return false;
};
