import { SqlError, SqlErrorCode } from './errors';

/**
 * MindsDB speaks MySQL: `backticks` quote identifiers, "double quotes" quote strings, `:name` and
 * `@name` are placeholders. DuckDB speaks PostgreSQL. This rewrites one into the other token by
 * token (never inside string literals or comments), and returns the placeholders it found.
 *
 * Linear in the text: ordinary text is copied in runs, and what precedes a double-quoted token
 * (alias or string?) is tracked as tokens are emitted. It used to be recomputed from the whole
 * output for each such token, quadratic: 256 KiB of `"a", ` took 10 s of the event loop.
 */
export const toDuckDbDialect = (sql: string): { sql: string; placeholders: string[] } => {
  const parts: string[] = [];
  const placeholders: string[] = [];
  // The output so far, as isAliasPosition needs it: its last non-blank character, the word
  // ending there (if any), and whether blanks follow it.
  let lastChar = '';
  let lastWord: string | undefined;
  let blankAfter = false;
  const emit = (text: string) => {
    if (text.length === 0) return;
    parts.push(text);
    let p = text.length - 1;
    while (p >= 0 && /\s/.test(text[p]!)) p--;
    if (p < 0) {
      blankAfter = true;
      return;
    }
    blankAfter = p < text.length - 1;
    lastChar = text[p]!;
    let q = p;
    while (q >= 0 && /[A-Za-z0-9_]/.test(text[q]!)) q--;
    const run = text.slice(q + 1, p + 1);
    const letter = run.search(/[A-Za-z_]/);
    lastWord = letter === -1 ? undefined : run.slice(letter);
  };
  const isAliasPosition = () => {
    if (lastWord !== undefined) {
      const word = lastWord.toUpperCase();
      return word === 'AS' || (!VALUE_CONTEXT.has(word) && blankAfter);
    }
    // After a closing parenthesis, a number or a quoted token, a quoted word names the column.
    return /^[)\d'"]$/.test(lastChar) && blankAfter;
  };

  const special = /['"`]|--|\/\*|[:@][A-Za-z_]/g;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    special.lastIndex = i;
    const found = special.exec(sql);
    let at = found ? found.index : n;
    // `::` casts and `@@` / `x@y` are not placeholders: keep looking past them.
    while (
      found &&
      at < n &&
      (sql[at] === ':' || sql[at] === '@') &&
      (sql[at - 1] === ':' || sql[at - 1] === '@')
    ) {
      special.lastIndex = at + 1;
      const again = special.exec(sql);
      at = again ? again.index : n;
    }
    emit(sql.slice(i, at));
    i = at;
    if (i >= n) break;
    const c = sql[i]!;
    if (c === "'") {
      const end = scanQuoted(sql, i, "'");
      emit(sql.slice(i, end));
      i = end;
    } else if (c === '"') {
      const end = scanQuoted(sql, i, '"');
      const body = sql.slice(i + 1, end - 1).replace(/""/g, '"');
      // An alias (`select 1 "two"`, `as "two"`) stays an identifier; anywhere else it is a string.
      emit(isAliasPosition() ? `"${body.replace(/"/g, '""')}"` : `'${body.replace(/'/g, "''")}'`);
      i = end;
    } else if (c === '`') {
      const end = scanQuoted(sql, i, '`');
      const body = sql.slice(i + 1, end - 1).replace(/``/g, '`');
      emit(`"${body.replace(/"/g, '""')}"`);
      i = end;
    } else if (c === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? n : end;
    } else if (c === '/') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
      emit(' ');
    } else {
      const m = /[A-Za-z_][A-Za-z0-9_]*/y;
      m.lastIndex = i + 1;
      const name = m.exec(sql)![0];
      placeholders.push(name);
      emit(`$${name}`);
      i += 1 + name.length;
    }
  }
  return { sql: parts.join(''), placeholders };
};

/** Words after which a quoted token starts a value, not an alias. */
const VALUE_CONTEXT = new Set([
  'SELECT',
  'WHERE',
  'AND',
  'OR',
  'NOT',
  'IN',
  'LIKE',
  'ILIKE',
  'IS',
  'ON',
  'THEN',
  'ELSE',
  'WHEN',
  'CASE',
  'BY',
  'HAVING',
  'BETWEEN',
  'VALUES',
  'SET',
  'DISTINCT',
  'ALL',
  'ANY',
  'SOME',
  'RETURN',
  'LIMIT',
  'OFFSET',
  'USING',
  'INTERVAL',
  'DATE',
  'TIMESTAMP',
  'TIME',
  'ESCAPE',
  'END',
]);

const scanQuoted = (sql: string, start: number, quote: string): number => {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === '\\' && quote !== '`') {
      i += 2;
      continue;
    }
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  throw new SqlError(
    SqlErrorCode.Syntax,
    `Unterminated ${quote} quoted text starting at character ${start + 1}`,
  );
};

/**
 * Leading whitespace, trailing semicolons and whitespace are not part of a statement. A loop, not
 * `/[;\s]+$/`: that regex retries from every blank of a long run, quadratic (1 MiB of spaces
 * before the last character: minutes).
 */
export const trimStatement = (sql: string) => {
  const t = sql.trim();
  let end = t.length;
  while (end > 0 && (t[end - 1] === ';' || /\s/.test(t[end - 1]!))) end--;
  return t.slice(0, end);
};

/** The first keyword, upper-cased (comments and parentheses skipped). */
export const leadingKeyword = (sql: string) => {
  const stripped = sql.replace(/^(\s|--[^\n]*\n|\/\*[\s\S]*?\*\/|\()*/, '');
  return (/^[A-Za-z_]+/.exec(stripped)?.[0] ?? '').toUpperCase();
};

/**
 * `project.model.3` names a model version; DuckDB would read `.3` as a number, so the version is
 * quoted as an identifier (`project.model."3"`). Only outside string literals. One pass over
 * tokens: the regex it replaces backtracked through every long identifier from each of its
 * characters (256 KiB of one name: 50 s).
 */
export const quoteModelVersions = (sql: string) => {
  // Most queries have no `.<digit>` at all.
  if (!/\.\d/.test(sql)) return sql;
  const NAME = 1;
  const DOT = 2;
  const OTHER = 4;
  const LETTER = 8; // a name holding a letter or _
  const STARTS_WITH_LETTER = 16;
  const BLANK = 32; // blanks before the token
  const parts: string[] = [];
  let copied = 0;
  // The last four tokens, as flags, oldest first.
  let [t1, t2, t3, t4] = [0, 0, 0, 0];
  let blank = 0;
  const note = (token: number) => {
    [t1, t2, t3, t4] = [t2, t3, t4, token | blank];
    blank = 0;
  };
  const isWordChar = (code: number) =>
    (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
  const isDigit = (code: number) => code >= 48 && code <= 57;
  let i = 0;
  while (i < sql.length) {
    const code = sql.charCodeAt(i);
    const c = sql[i]!;
    if (code === 32 || code === 10 || code === 9 || code === 13 || /\s/.test(c)) {
      blank = BLANK;
      i++;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      note(c === '"' ? NAME | LETTER | STARTS_WITH_LETTER : OTHER);
      i = j + 1;
    } else if (isWordChar(code)) {
      let j = i + 1;
      let digits = isDigit(code);
      let letter = !digits;
      while (j < sql.length && isWordChar(sql.charCodeAt(j))) {
        const d = isDigit(sql.charCodeAt(j));
        digits &&= d;
        letter ||= !d;
        j++;
      }
      if (
        digits &&
        !blank &&
        t1 & NAME &&
        t1 & LETTER &&
        t2 & DOT &&
        t3 & NAME &&
        t3 & STARTS_WITH_LETTER &&
        t4 & DOT &&
        !(t4 & BLANK)
      ) {
        parts.push(sql.slice(copied, i), `"${sql.slice(i, j)}"`);
        copied = j;
        [t1, t2, t3, t4] = [0, 0, 0, 0];
      } else note(NAME | (letter ? LETTER : 0) | (isDigit(code) ? 0 : STARTS_WITH_LETTER));
      i = j;
    } else {
      note(c === '.' ? DOT : OTHER);
      i++;
    }
  }
  parts.push(sql.slice(copied));
  return parts.join('');
};
