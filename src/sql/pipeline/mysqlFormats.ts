/**
 * MySQL's date format specifiers (DATE_FORMAT, STR_TO_DATE, FROM_UNIXTIME) in DuckDB's strftime /
 * strptime spelling. DuckDB requires a constant format, so the translation is done on the literal
 * in the statement's text (lexical.ts), and the functions themselves are macros that pass the
 * format through (src/duckdb/mysqlFunctions.ts).
 */
const SPECIFIERS: Record<string, string> = {
  a: '%a',
  b: '%b',
  c: '%-m',
  d: '%d',
  e: '%-d',
  f: '%f',
  H: '%H',
  h: '%I',
  I: '%I',
  i: '%M',
  j: '%j',
  k: '%-H',
  l: '%-I',
  M: '%B',
  m: '%m',
  p: '%p',
  r: '%I:%M:%S %p',
  S: '%S',
  s: '%S',
  T: '%H:%M:%S',
  U: '%U',
  u: '%W',
  V: '%V',
  v: '%V',
  W: '%A',
  w: '%w',
  X: '%G',
  x: '%G',
  Y: '%Y',
  y: '%y',
  '%': '%%',
};

/**
 * The DuckDB format of a MySQL one. A specifier MySQL does not define stands for its letter, as in
 * MySQL (`%q` → `q`); a letter DuckDB would read as a specifier is never produced by accident.
 * For parsing, unpadded specifiers (`%-d`) become the padded ones, which DuckDB's strptime reads
 * with or without the leading zero.
 */
export const duckDbDateFormat = (mysql: string, use: 'format' | 'parse'): string => {
  let out = '';
  for (let i = 0; i < mysql.length; i++) {
    const c = mysql[i]!;
    if (c !== '%' || i + 1 === mysql.length) {
      out += c === '%' ? '%%' : c;
      continue;
    }
    const letter = mysql[++i]!;
    const spec = SPECIFIERS[letter] ?? letter;
    out += use === 'parse' ? spec.replace(/%-/g, '%') : spec;
  }
  return out;
};

/** The functions whose last argument is a MySQL date format, and how DuckDB uses it. */
export const DATE_FORMAT_FUNCTIONS: Record<string, 'format' | 'parse'> = {
  DATE_FORMAT: 'format',
  TIME_FORMAT: 'format',
  FROM_UNIXTIME: 'format',
  STR_TO_DATE: 'parse',
};
