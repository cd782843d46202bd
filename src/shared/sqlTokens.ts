/** The text cannot be read as SQL at all (a quote never closed): a syntax error to the client. */
export class SqlSyntaxError extends Error {
  constructor(
    message: string,
    /** Where in the text the trouble starts (0-based): the text before it reads as tokens. */
    readonly offset: number,
  ) {
    super(message);
    this.name = 'SqlSyntaxError';
  }
}

/**
 * The one SQL tokenizer: every rewrite of query text (dialect translation, version quoting, list
 * parameters, qualifier stripping, join conditions) walks these tokens instead of scanning the text
 * its own way. Linear in the text, one pass, no backtracking: texts are up to SQL_MAX_QUERY_BYTES
 * and every rewrite runs on the event loop.
 *
 * Three dialects:
 * - `mysql` (what MindsDB clients send): 'strings' and "double-quoted" text (a string or an alias,
 *   decided by context) with backslash escapes, `backtick` identifiers, `:name`/`@name`
 *   placeholders (not `::` casts nor `@@variables`); an unterminated quote is a syntax error.
 * - `mysql-client` (what a client sends the MySQL front door, which answers some statements itself
 *   and hands the rest to the engine): `mysql`, plus what MySQL's own clients write: `#` comments,
 *   `?` placeholders, `@@system` variables (`@@x`, `@@session.x`) and `@user` variables (`@x`,
 *   `` @`x y` ``, `@'x y'`) read whole, numbers (`1.5`, `.5`, `2e-3`), and MySQL's name characters
 *   (`$`, anything past U+007F) in words.
 * - `duckdb` (what we give DuckDB, and what PostgreSQL clients send the PostgreSQL door): 'strings',
 *   "identifiers" (doubled quotes inside, no backslash escapes), `$name` placeholders, line comments
 *   ending at \n or \r, block comments that nest.
 */
type TokenKind =
  | 'blank'
  | 'comment'
  /** A run of letters, digits and `_` (and `$` inside, in DuckDB): keywords, names and (but in `mysql-client`) numbers. */
  | 'word'
  /** `mysql-client` only: `1`, `1.5`, `.5`, `2e-3` (`1abc` is a word: MySQL names may start with a digit). */
  | 'number'
  | 'string'
  /** `"…"` in MySQL: a string or an alias, depending on where it stands. */
  | 'dquoted'
  /** `` `…` `` in MySQL, `"…"` in DuckDB. */
  | 'identifier'
  /** `:name`, and `@name` in `mysql`; `?` too in `mysql-client`; `$name` in DuckDB. */
  | 'placeholder'
  /** `mysql-client` only: `@@x`, `@@session.x`. */
  | 'systemVariable'
  /** `mysql-client` only: `@x`, `` @`x y` ``, `@'x y'` (which `mysql` reads as a placeholder, when unquoted). */
  | 'userVariable'
  | 'symbol';

export type Token = { readonly kind: TokenKind; readonly start: number; readonly end: number };
export type Dialect = 'mysql' | 'mysql-client' | 'duckdb';

const isWordCode = (code: number) =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
const isLetterCode = (code: number) =>
  (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
const isBlank = (c: string) => c === ' ' || c === '\n' || c === '\t' || c === '\r' || /\s/.test(c);
const isDigitCode = (code: number) => code >= 48 && code <= 57;
/** MySQL's characters of an unquoted name: ASCII letters, digits, `_`, `$`, and anything past U+007F. */
const isNameCode = (sql: string, i: number) => {
  const code = sql.charCodeAt(i);
  return isWordCode(code) || code === 36 || (code >= 0x80 && !isBlank(sql[i]!));
};

/** Where a MySQL number starting at `start` ends, or -1 when the run is a name (`1abc`). */
const numberEnd = (sql: string, start: number): number => {
  let i = start;
  while (isDigitCode(sql.charCodeAt(i))) i++;
  if (sql[i] === '.') {
    i++;
    while (isDigitCode(sql.charCodeAt(i))) i++;
  }
  if (sql[i] === 'e' || sql[i] === 'E') {
    const digits = sql[i + 1] === '+' || sql[i + 1] === '-' ? i + 2 : i + 1;
    if (isDigitCode(sql.charCodeAt(digits))) {
      i = digits;
      while (isDigitCode(sql.charCodeAt(i))) i++;
    }
  }
  return isNameCode(sql, i) ? -1 : i;
};

/** Where a MySQL block comment opening at `start` ends (they do not nest). */
const blockCommentEnd = (sql: string, start: number) => {
  const end = sql.indexOf('*/', start + 2);
  return end === -1 ? sql.length : end + 2;
};

/** Where a DuckDB (and PostgreSQL) block comment opening at `start` ends: they nest. */
const nestedCommentEnd = (sql: string, start: number) => {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return sql.length;
};

/** Where a quoted run opening at `start` ends (just past its closing quote), or -1 if it does not. */
const quotedEnd = (sql: string, start: number, quote: string, backslashEscapes: boolean): number => {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === '\\') i += 2;
    else if (c === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return -1;
};

const unterminated = (at: number, quote: string) =>
  new SqlSyntaxError(`Unterminated ${quote} quoted text starting at character ${at + 1}`, at);

/**
 * A statement's text is read by several steps, each in its own module: a SELECT's DuckDB text by
 * the model-join step and again by `printSelect` (and, over PostgreSQL, first by the door). So the
 * last texts read are kept, by text and dialect, and a step asking for one again is handed the same
 * tokens: frozen, and typed readonly, so no caller can change what another is handed. Bounded by
 * count and by size: at most `RECENT` texts, of which at most one is longer than `LONG_TEXT`
 * characters, the latest, kept until the next long one (a 256 KB statement's tokens, up to one per
 * character, are some 15 MB; a long text read in another dialect in between is a miss).
 */
const RECENT = 8;
const LONG_TEXT = 8192;
const recent: { readonly sql: string; readonly dialect: Dialect; readonly tokens: readonly Token[] }[] = [];

/**
 * The tokens of `sql` in `dialect` (see `TokenKind`); a quote never closed in a MySQL dialect is a
 * `SqlSyntaxError`. The same frozen array for a text read recently (see `RECENT`).
 */
export const tokenize = (sql: string, dialect: Dialect): readonly Token[] => {
  const at = recent.findIndex((e) => e.dialect === dialect && e.sql === sql);
  if (at !== -1) return recent[at]!.tokens;
  const tokens = Object.freeze(readTokens(sql, dialect));
  const long = sql.length > LONG_TEXT;
  const evicted = long ? recent.findIndex((e) => e.sql.length > LONG_TEXT) : -1;
  if (evicted !== -1) recent.splice(evicted, 1);
  else if (recent.length >= RECENT) recent.shift();
  recent.push({ sql, dialect, tokens });
  return tokens;
};

/** The reading itself, without the memo: `tokenize`'s spec compares the two; everything else calls `tokenize`. */
export const readTokens = (sql: string, dialect: Dialect): Token[] => {
  const tokens: Token[] = [];
  const n = sql.length;
  const mysql = dialect !== 'duckdb';
  const client = dialect === 'mysql-client';
  let i = 0;
  const push = (kind: TokenKind, end: number) => {
    tokens.push({ kind, start: i, end });
    i = end;
  };
  while (i < n) {
    const c = sql[i]!;
    const code = sql.charCodeAt(i);
    const number =
      client &&
      (isDigitCode(code) || (c === '.' && isDigitCode(sql.charCodeAt(i + 1)) && !isNameCode(sql, i - 1)))
        ? numberEnd(sql, i)
        : -1;
    if (isBlank(c)) {
      let j = i + 1;
      while (j < n && isBlank(sql[j]!)) j++;
      push('blank', j);
    } else if (number !== -1) push('number', number);
    else if (client ? isNameCode(sql, i) : isWordCode(code)) {
      let j = i + 1;
      if (client) while (j < n && isNameCode(sql, j)) j++;
      else while (j < n && (isWordCode(sql.charCodeAt(j)) || (dialect === 'duckdb' && sql[j] === '$'))) j++;
      push('word', j);
    } else if ((c === '-' && sql[i + 1] === '-') || (client && c === '#')) {
      // DuckDB (like PostgreSQL) ends a line comment at \r too.
      let end = sql.indexOf('\n', i);
      if (!mysql) {
        const cr = sql.indexOf('\r', i);
        if (cr !== -1 && (end === -1 || cr < end)) end = cr;
      }
      push('comment', end === -1 ? n : end);
    } else if (c === '/' && sql[i + 1] === '*') {
      push('comment', mysql ? blockCommentEnd(sql, i) : nestedCommentEnd(sql, i));
    } else if (c === "'" || c === '"' || (c === '`' && mysql)) {
      const end = quotedEnd(sql, i, c, mysql && c !== '`');
      if (end === -1) {
        if (mysql) throw unterminated(i, c);
        // DuckDB text we made is always closed; an odd quote in anything else is just a character.
        if (c === '"') push('symbol', i + 1);
        else push('string', n);
      } else push(c === "'" ? 'string' : c === '`' || dialect === 'duckdb' ? 'identifier' : 'dquoted', end);
    } else if (client && c === '?') push('placeholder', i + 1);
    else if (client && c === '@') {
      const next = sql[i + 1];
      if (next === '@' && isNameCode(sql, i + 2)) {
        let j = i + 3;
        while (j < n && (isNameCode(sql, j) || (sql[j] === '.' && isNameCode(sql, j + 1)))) j++;
        push('systemVariable', j);
      } else if (next === "'" || next === '"' || next === '`') {
        const end = quotedEnd(sql, i + 1, next, next !== '`');
        if (end === -1) throw unterminated(i + 1, next);
        push('userVariable', end);
      } else if (isNameCode(sql, i + 1)) {
        let j = i + 2;
        while (j < n && (isNameCode(sql, j) || sql[j] === '.')) j++;
        push('userVariable', j);
      } else push('symbol', i + 1);
    } else if (
      (mysql && (c === ':' || c === '@') && sql[i - 1] !== ':' && sql[i - 1] !== '@') ||
      (dialect === 'duckdb' && c === '$' && !isWordCode(sql.charCodeAt(i - 1)))
    ) {
      if (isLetterCode(sql.charCodeAt(i + 1))) {
        let j = i + 2;
        while (j < n && isWordCode(sql.charCodeAt(j))) j++;
        push('placeholder', j);
      } else push('symbol', i + 1);
    } else push('symbol', i + 1);
  }
  return tokens;
};

/** The text of a token. */
export const textOf = (sql: string, t: Token) => sql.slice(t.start, t.end);

/** A quoted token's content, its doubled quotes undone (and, in MySQL, backslash escapes kept as written). */
export const unquoted = (sql: string, t: Token) => {
  const quote = sql[t.start]!;
  return sql
    .slice(t.start + 1, t.end - 1)
    .split(quote + quote)
    .join(quote);
};

/** Whether a word token is this keyword (case-insensitive). */
export const isKeyword = (sql: string, t: Token | undefined, keyword: string) =>
  t !== undefined &&
  t.kind === 'word' &&
  t.end - t.start === keyword.length &&
  textOf(sql, t).toUpperCase() === keyword;

/** Words that end a FROM clause at its depth: the next clause's keyword. */
export const ENDS_FROM_CLAUSE: ReadonlySet<string> = new Set([
  'WHERE',
  'GROUP',
  'HAVING',
  'ORDER',
  'LIMIT',
  'OFFSET',
  'FETCH',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'WINDOW',
  'QUALIFY',
  'SELECT',
  'FOR',
]);

/** Words that may follow a relation in a FROM clause and are no name: a clause's, a join's. */
const NOT_RELATION_NAMES: ReadonlySet<string> = new Set([
  ...ENDS_FROM_CLAUSE,
  'JOIN',
  'INNER',
  'OUTER',
  'LEFT',
  'RIGHT',
  'FULL',
  'CROSS',
  'NATURAL',
  'LATERAL',
  'ON',
  'USING',
  'WITH',
]);

/**
 * Whether the token after a relation (a table, a function in FROM) is its alias, or where a
 * relation's name is expected, a name: a quoted identifier, or a word no clause or join begins with.
 */
export const isRelationName = (sql: string, t: Token | undefined) =>
  t !== undefined &&
  (t.kind === 'identifier' || (t.kind === 'word' && !NOT_RELATION_NAMES.has(textOf(sql, t).toUpperCase())));

/** The index of the `)` token closing the `(` token at `open` (other tokens skipped), or -1 when none does. */
export const closingParen = (sql: string, tokens: readonly Token[], open: number): number => {
  let depth = 0;
  for (let k = open; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind !== 'symbol') continue;
    if (sql[t.start] === '(') depth++;
    else if (sql[t.start] === ')' && --depth === 0) return k;
  }
  return -1;
};

/** Whether a token matters to a reader: not a blank, not a comment. */
export const isSignificant = (t: Token) => t.kind !== 'blank' && t.kind !== 'comment';

/** `significant`'s answers for `tokenize`'s arrays (frozen, so an answer kept stays right), while they live. */
const significantOf = new WeakMap<readonly Token[], readonly Token[]>();

/**
 * Tokens that matter to a reader: no blanks, no comments. For an array `tokenize` handed out, the
 * same frozen answer each time it is asked (two steps of a statement's path ask it of one text).
 */
export const significant = (tokens: readonly Token[]): readonly Token[] => {
  const kept = significantOf.get(tokens);
  if (kept) return kept;
  const found = tokens.filter(isSignificant);
  if (!Object.isFrozen(tokens)) return found;
  const frozen = Object.freeze(found);
  significantOf.set(tokens, frozen);
  return frozen;
};

/**
 * MindsDB's native queries, `FROM name ( … )` and `JOIN name ( … )`: the text inside belongs to
 * the database `name` names and goes there as written, so no rewrite of ours may touch it. Each
 * span gives the significant tokens' indexes of the keyword, the opening and the closing
 * parenthesis (-1 when none closes), and the name as written (unquoted). Whether `name` is a
 * database is for the caller to ask.
 */
export const nativeQuerySpans = (
  sql: string,
  tokens: readonly Token[],
): { keyword: number; name: string; open: number; close: number }[] => {
  const spans: { keyword: number; name: string; open: number; close: number }[] = [];
  for (let k = 0; k + 2 < tokens.length; k++) {
    const [keyword, target, open] = [tokens[k]!, tokens[k + 1]!, tokens[k + 2]!];
    if (!isKeyword(sql, keyword, 'FROM') && !isKeyword(sql, keyword, 'JOIN')) continue;
    const name =
      target.kind === 'word' && /^[A-Za-z_]/.test(textOf(sql, target))
        ? textOf(sql, target)
        : target.kind === 'identifier' || target.kind === 'dquoted'
          ? unquoted(sql, target)
          : null;
    if (name === null || open.kind !== 'symbol' || sql[open.start] !== '(') continue;
    const close = closingParen(sql, tokens, k + 2);
    spans.push({ keyword: k, name, open: k + 2, close });
    if (close < 0) break;
    k = close;
  }
  return spans;
};

/** Significant tokens outside every native query's parentheses (see `nativeQuerySpans`), in order. */
export const outsideNativeQueries = (sql: string, tokens: readonly Token[]): Token[] => {
  const spans = nativeQuerySpans(sql, tokens);
  if (spans.length === 0) return [...tokens];
  const kept: Token[] = [];
  let s = 0;
  for (let k = 0; k < tokens.length; k++) {
    const span = spans[s];
    if (span && k > span.open && (span.close < 0 || k < span.close)) continue;
    if (span && span.close >= 0 && k >= span.close) s++;
    kept.push(tokens[k]!);
  }
  return kept;
};
