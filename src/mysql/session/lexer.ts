/**
 * MySQL's lexical structure, enough to split a multi-statement text, find `?` placeholders and
 * recognise the statements a connection answers itself, never looking inside string literals,
 * quoted identifiers or comments.
 */
export type TokenKind =
  | 'space'
  | 'comment'
  | 'string'
  | 'quoted' // `identifier`
  | 'word'
  | 'number'
  | 'systemVariable' // @@name, @@session.name
  | 'userVariable' // @name
  | 'placeholder' // ?
  | 'punct';

export type Token = { kind: TokenKind; text: string; start: number; end: number };

const isWordChar = (c: string) => /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
const isDigit = (c: string) => c >= '0' && c <= '9';

/**
 * Ends at the closing quote; a doubled quote stays inside. A backslash escapes nothing: the engine
 * reads literals as standard SQL (DuckDB), and where a statement ends must agree with it.
 */
const quotedEnd = (sql: string, at: number, quote: string) => {
  let i = at + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
};

export const tokenize = (sql: string): Token[] => {
  const tokens: Token[] = [];
  let i = 0;
  const push = (kind: TokenKind, end: number) => {
    tokens.push({ kind, text: sql.slice(i, end), start: i, end });
    i = end;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1] ?? '';
    if (/\s/.test(c)) {
      let j = i + 1;
      while (j < sql.length && /\s/.test(sql[j]!)) j++;
      push('space', j);
    } else if (c === '#' || (c === '-' && next === '-')) {
      const j = sql.indexOf('\n', i);
      push('comment', j < 0 ? sql.length : j);
    } else if (c === '/' && next === '*') {
      const j = sql.indexOf('*/', i + 2);
      push('comment', j < 0 ? sql.length : j + 2);
    } else if (c === "'" || c === '"') push('string', quotedEnd(sql, i, c));
    else if (c === '`') push('quoted', quotedEnd(sql, i, '`'));
    else if (c === '?') push('placeholder', i + 1);
    else if (c === '@' && next === '@') {
      let j = i + 2;
      while (j < sql.length && (isWordChar(sql[j]!) || (sql[j] === '.' && isWordChar(sql[j + 1] ?? '')))) j++;
      push('systemVariable', j);
    } else if (c === '@' && (isWordChar(next) || next === '`' || next === "'" || next === '"')) {
      const j = isWordChar(next)
        ? (() => {
            let k = i + 1;
            while (k < sql.length && (isWordChar(sql[k]!) || sql[k] === '.')) k++;
            return k;
          })()
        : quotedEnd(sql, i + 1, next);
      push('userVariable', j);
    } else if (isDigit(c) || (c === '.' && isDigit(next))) {
      let j = i + 1;
      while (j < sql.length && (isWordChar(sql[j]!) || sql[j] === '.')) {
        if ((sql[j] === 'e' || sql[j] === 'E') && (sql[j + 1] === '+' || sql[j + 1] === '-')) j++;
        j++;
      }
      push(/^[0-9.]+([eE][+-]?\d+)?$/.test(sql.slice(i, j)) ? 'number' : 'word', j);
    } else if (isWordChar(c)) {
      let j = i + 1;
      while (j < sql.length && isWordChar(sql[j]!)) j++;
      push('word', j);
    } else {
      const two = c + next;
      push(
        'punct',
        [':=', '<=', '>=', '<>', '!=', '::', '||', '&&', '<<', '>>', '->'].includes(two) ? i + 2 : i + 1,
      );
    }
  }
  return tokens;
};

export const isSignificant = (t: Token) => t.kind !== 'space' && t.kind !== 'comment';

/** The statements of a multi-statement text, each without its `;` (empty ones dropped). */
export const splitStatements = (sql: string): string[] => {
  const statements: string[] = [];
  let from = 0;
  let significant = false;
  for (const t of tokenize(sql)) {
    if (t.kind === 'punct' && t.text === ';') {
      if (significant) statements.push(sql.slice(from, t.start));
      from = t.end;
      significant = false;
    } else if (isSignificant(t)) significant = true;
  }
  if (significant) statements.push(sql.slice(from));
  return statements;
};

/** The name `?` number `i` (0-based) is passed to the engine under. */
export const placeholderName = (i: number) => `__mysql_param_${i + 1}`;

/** Replaces each `?` with the engine's named placeholder (`:__mysql_param_1`, …); counts them. */
export const namePlaceholders = (sql: string): { sql: string; count: number } => {
  let count = 0;
  let out = '';
  let at = 0;
  for (const t of tokenize(sql)) {
    if (t.kind !== 'placeholder') continue;
    out += `${sql.slice(at, t.start)}:${placeholderName(count++)}`;
    at = t.end;
  }
  return { sql: count === 0 ? sql : out + sql.slice(at), count };
};

/** The text of a string literal token, quotes removed (a doubled quote is one). */
export const unquoteString = (text: string) => {
  const quote = text[0]!;
  const body = text.slice(1, text.endsWith(quote) && text.length > 1 ? -1 : undefined);
  return body.split(quote + quote).join(quote);
};

/** An identifier token's name: backticks removed (doubled backticks are one). */
export const unquoteIdentifier = (t: Token) =>
  t.kind === 'quoted' ? t.text.slice(1, t.text.endsWith('`') ? -1 : undefined).replace(/``/g, '`') : t.text;

export const quoteIdentifier = (name: string) => `\`${name.replace(/`/g, '``')}\``;
export const quoteString = (s: string) => `'${s.replace(/'/g, "''")}'`;
