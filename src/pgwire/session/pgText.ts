import {
  closingParen,
  isKeyword,
  isSignificant,
  SqlSyntaxError,
  textOf,
  tokenize,
  type Token,
} from '../../shared/sqlTokens';

/**
 * PostgreSQL's SQL text as the engine reads it. The engine reads MindsDB's MySQL-flavoured dialect
 * and gives DuckDB (whose lexical rules are PostgreSQL's) its own translation; a PostgreSQL client
 * writes PostgreSQL's. So the door reads the text with the tokenizer's `duckdb` rules and writes
 * back only what the two disagree on:
 * - `"identifiers"` become `` `identifiers` `` (MySQL reads double quotes as strings);
 * - backslashes inside 'strings' are doubled (PostgreSQL's standard strings have no escapes, MySQL's do);
 * - `$1`, `$2` … become the engine's named parameters `:__pg_param_1` …
 * Everything else (keywords, `::` casts, operators, comments) goes through as written.
 */

export const paramName = (n: number) => `__pg_param_${n}`;

/**
 * What the engine cannot know about the connection, written into statements as literals:
 * `version()`, `current_database()`, `current_schema()`, `current_user`, `session_user`,
 * `current_setting('name')`, `pg_backend_pid()` (DuckDB has some of these, answering for itself).
 */
export type ConnectionValues = {
  version: string;
  database: string;
  schema: string;
  user: string;
  backendPid: number;
  setting(name: string): string | undefined;
};

/** A text literal in the engine's dialect. */
const engineLiteral = (value: string | number | null) =>
  value === null
    ? 'NULL'
    : typeof value === 'number'
      ? String(value)
      : `'${value.split('\\').join('\\\\').split("'").join("''")}'`;

/** Functions written with parentheses, and the SQL keywords written without. */
const CALLED: Record<string, (v: ConnectionValues) => string | number> = {
  VERSION: (v) => v.version,
  CURRENT_DATABASE: (v) => v.database,
  CURRENT_SCHEMA: (v) => v.schema,
  PG_BACKEND_PID: (v) => v.backendPid,
};
const BARE: Record<string, (v: ConnectionValues) => string> = {
  CURRENT_USER: (v) => v.user,
  SESSION_USER: (v) => v.user,
  CURRENT_CATALOG: (v) => v.database,
  CURRENT_SCHEMA: (v) => v.schema,
};

/** One statement of a query text: its text for the engine and what the door reads off it. */
export type PgStatement = {
  /** As the client wrote it (for messages and logs). */
  original: string;
  /** In the engine's dialect. */
  engineText: string;
  /** The significant tokens' texts (words upper-cased), for classifying. */
  words: string[];
  /** The same tokens as written (quotes and case kept), for reading values off them. */
  parts: string[];
  /** The highest `$n` used. */
  paramCount: number;
  /**
   * A connection value (`current_user`, `current_setting('x')` …) is written into `engineText`: the
   * text reads differently once the connection changes (after SET), so it is read again when bound.
   */
  readsConnection: boolean;
};

/** The index of the next significant token after `i` (tokens.length if none). */
const nextSignificant = (tokens: readonly Token[], i: number) => {
  let j = i + 1;
  while (j < tokens.length && !isSignificant(tokens[j]!)) j++;
  return j;
};

/** A token's text for the engine, the last token it took, and what it read: a `$n`, a connection value. */
type Translated = { text: string; upTo: number; param?: number; readsConnection?: true };

/** A call of a connection function starting at word `i` (optionally `pg_catalog.` before it), written as a literal. */
const connectionValue = (
  sql: string,
  tokens: readonly Token[],
  i: number,
  values: ConnectionValues,
): Translated | undefined => {
  let at = i;
  const word = () => textOf(sql, tokens[at]!).toUpperCase();
  if (word() === 'PG_CATALOG') {
    const dot = nextSignificant(tokens, at);
    if (textOf(sql, tokens[dot] ?? tokens[at]!) !== '.') return undefined;
    at = nextSignificant(tokens, dot);
    if (tokens[at]?.kind !== 'word') return undefined;
  }
  const name = word();
  const open = nextSignificant(tokens, at);
  const isOpen = tokens[open] !== undefined && textOf(sql, tokens[open]) === '(';
  if (isOpen && CALLED[name]) {
    const close = nextSignificant(tokens, open);
    if (textOf(sql, tokens[close] ?? tokens[open]!) !== ')') return undefined;
    return { text: engineLiteral(CALLED[name](values)), upTo: close };
  }
  if (isOpen && name === 'CURRENT_SETTING') {
    const arg = nextSignificant(tokens, open);
    const close = nextSignificant(tokens, arg);
    if (tokens[arg]?.kind !== 'string' || textOf(sql, tokens[close] ?? tokens[arg]) !== ')') return undefined;
    const setting = values.setting(textOf(sql, tokens[arg]).slice(1, -1).split("''").join("'"));
    return { text: engineLiteral(setting ?? null), upTo: close };
  }
  if (!isOpen && BARE[name] && at === i) return { text: engineLiteral(BARE[name](values)), upTo: at };
  return undefined;
};

const translateToken = (
  sql: string,
  tokens: readonly Token[],
  i: number,
  values: ConnectionValues | undefined,
  afterDot: boolean,
): Translated => {
  const t = tokens[i]!;
  const text = textOf(sql, t);
  switch (t.kind) {
    case 'identifier':
      return { text: `\`${text.slice(1, -1).split('""').join('"').split('`').join('``')}\``, upTo: i };
    case 'string':
      if (text.length < 2 || !text.endsWith("'"))
        throw new SqlSyntaxError(`Unterminated ' quoted text starting at character ${t.start + 1}`, t.start);
      return { text: text.split('\\').join('\\\\'), upTo: i };
    case 'symbol': {
      const next = tokens[i + 1];
      if (text === '$' && next?.kind === 'word' && /^\d+$/.test(textOf(sql, next))) {
        const n = Number(textOf(sql, next));
        return { text: `:${paramName(n)}`, upTo: i + 1, param: n };
      }
      if (text === '"')
        throw new SqlSyntaxError(
          `Unterminated " quoted identifier starting at character ${t.start + 1}`,
          t.start,
        );
      return { text, upTo: i };
    }
    case 'word': {
      // Not after a dot: `t.version()` is somebody's column, not the server's version.
      const value = !afterDot && values ? connectionValue(sql, tokens, i, values) : undefined;
      return value ? { ...value, readsConnection: true } : { text, upTo: i };
    }
    default:
      return { text, upTo: i };
  }
};

/** The text's tokens from `from` on (offsets into the whole text). */
const tokensFrom = (sql: string, from: number): readonly Token[] =>
  from === 0
    ? tokenize(sql, 'duckdb')
    : tokenize(sql.slice(from), 'duckdb').map((t) => ({
        kind: t.kind,
        start: t.start + from,
        end: t.end + from,
      }));

const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;

/**
 * A string the shared tokenizer does not read PostgreSQL's way, starting at token `t`: dollar-quoted
 * (`$$…$$`, `$tag$…$tag$`: nothing inside is special) or an escape string (`E'…'`: backslash escapes,
 * which the engine's dialect reads alike). Its text for the engine and where it ends, or undefined.
 */
const pgOnlyString = (sql: string, t: Token): { text: string; end: number } | undefined => {
  const first = sql[t.start];
  if ((t.kind === 'symbol' || t.kind === 'placeholder') && first === '$') {
    const tag = DOLLAR_TAG.exec(sql.slice(t.start, t.start + 200))?.[0];
    if (!tag) return undefined;
    const close = sql.indexOf(tag, t.start + tag.length);
    if (close < 0)
      throw new SqlSyntaxError(
        `unterminated dollar-quoted string starting at character ${t.start + 1}`,
        t.start,
      );
    return { text: engineLiteral(sql.slice(t.start + tag.length, close)), end: close + tag.length };
  }
  if (t.kind === 'word' && t.end === t.start + 1 && (first === 'E' || first === 'e') && sql[t.end] === "'") {
    let i = t.end + 1;
    while (i < sql.length) {
      if (sql[i] === '\\') i += 2;
      else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
      else if (sql[i] === "'") return { text: sql.slice(t.end, i + 1), end: i + 1 };
      else i++;
    }
    throw new SqlSyntaxError(`Unterminated ' quoted text starting at character ${t.end + 1}`, t.end);
  }
  return undefined;
};

/**
 * A name in backticks (MySQL's quoting, which the engine reads: `` FROM `my db` (…) ``), starting
 * at token `t`: where it ends, or undefined. PostgreSQL has no backticks, so the shared tokenizer's
 * PostgreSQL rules read one as a symbol and its inside as tokens; read whole, it is one name, as the
 * engine will read it, and a native query after it is recognised as the engine recognises it.
 */
const backtickName = (sql: string, t: Token): number | undefined => {
  if (t.kind !== 'symbol' || sql[t.start] !== '`') return undefined;
  for (let i = t.start + 1; i < sql.length; i++) {
    if (sql[i] !== '`') continue;
    if (sql[i + 1] === '`') i++;
    else return i + 1;
  }
  return undefined;
};

const isSymbolAt = (sql: string, t: Token | undefined, c: string) =>
  t?.kind === 'symbol' && sql[t.start] === c;

/** Whether the two tokens before a `(` are `FROM name` or `JOIN name` (MindsDB's native query). */
const nativeOpening = (sql: string, recent: readonly Token[]) => {
  const [keyword, name] = recent;
  return (
    keyword !== undefined &&
    name !== undefined &&
    (isKeyword(sql, keyword, 'FROM') || isKeyword(sql, keyword, 'JOIN')) &&
    ((name.kind === 'word' && /^[A-Za-z_]/.test(textOf(sql, name))) || name.kind === 'identifier')
  );
};

/**
 * Splits a query text at its top-level semicolons and translates each statement (writing in the
 * connection's values when given); empty statements are dropped.
 */
export const readStatements = (sql: string, values?: ConnectionValues): PgStatement[] => {
  let tokens = tokensFrom(sql, 0);
  const statements: PgStatement[] = [];
  let engineText = '';
  let words: string[] = [];
  let parts: string[] = [];
  let paramCount = 0;
  let readsConnection = false;
  let start = 0;
  let afterDot = false;
  // The last two significant tokens, to know `FROM name (` when its parenthesis comes.
  let recent: Token[] = [];
  const finish = (end: number) => {
    if (words.length)
      statements.push({
        original: sql.slice(start, end).trim(),
        engineText: engineText.trim(),
        words,
        parts,
        paramCount,
        readsConnection,
      });
    engineText = '';
    words = [];
    parts = [];
    paramCount = 0;
    readsConnection = false;
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'symbol' && sql[t.start] === ';') {
      finish(t.start);
      start = t.end;
      continue;
    }
    const special = pgOnlyString(sql, t);
    if (special) {
      // Read again from its end: the tokenizer took its inside for something else.
      engineText += special.text;
      parts.push(special.text);
      words.push(special.text);
      afterDot = false;
      tokens = tokensFrom(sql, special.end);
      i = -1;
      continue;
    }
    const backtickEnd = backtickName(sql, t);
    if (backtickEnd !== undefined) {
      // Goes through as written; read again from its end, as after a PostgreSQL-only string.
      const name: Token = { kind: 'identifier', start: t.start, end: backtickEnd };
      const written = sql.slice(t.start, backtickEnd);
      engineText += written;
      parts.push(written);
      words.push(written);
      recent = [recent[recent.length - 1]!, name].filter(Boolean);
      afterDot = false;
      tokens = tokensFrom(sql, backtickEnd);
      i = -1;
      continue;
    }
    // A native query's text (`FROM db ( … )`) goes to that database as the client wrote it.
    const nativeClose =
      isSymbolAt(sql, t, '(') && nativeOpening(sql, recent) ? closingParen(sql, tokens, i) : -1;
    if (nativeClose > i) {
      const body = sql.slice(t.start, tokens[nativeClose]!.end);
      engineText += body;
      parts.push(body);
      words.push(body);
      recent = [];
      afterDot = false;
      i = nativeClose;
      continue;
    }
    const significantToken = (token: Token) => {
      if (!isSignificant(token)) return;
      recent = [recent[recent.length - 1]!, token].filter(Boolean);
      const written = textOf(sql, token);
      parts.push(written);
      words.push(token.kind === 'word' ? written.toUpperCase() : written);
    };
    significantToken(t);
    const translated = translateToken(sql, tokens, i, values, afterDot);
    const { text, upTo, param } = translated;
    if (translated.readsConnection) readsConnection = true;
    engineText += text;
    if (param !== undefined) paramCount = Math.max(paramCount, param);
    // Tokens a translation swallowed still count as the statement's words (classification reads them).
    for (let j = i + 1; j <= upTo; j++) significantToken(tokens[j]!);
    const last = tokens[upTo]!;
    if (isSignificant(last)) afterDot = last.kind === 'symbol' && sql[last.start] === '.';
    i = upTo;
  }
  finish(sql.length);
  return statements;
};

/**
 * The command tag PostgreSQL ends a statement's answer with: `SELECT n` for rows, `INSERT 0 n`,
 * `UPDATE n`, `DELETE n` with the rows changed, else the statement's leading keywords
 * (`CREATE TABLE`, `DROP MODEL`, `SET`).
 */
export const commandTag = (
  words: readonly string[],
  rows: number | null | undefined,
  returnedRows: boolean,
): string => {
  const first = words[0] ?? '';
  if (returnedRows) return first === 'SHOW' ? 'SHOW' : `SELECT ${rows ?? 0}`;
  switch (first) {
    case 'INSERT':
      return `INSERT 0 ${rows ?? 0}`;
    case 'UPDATE':
    case 'DELETE':
    case 'MERGE':
      return `${first} ${rows ?? 0}`;
    case 'CREATE':
    case 'DROP':
    case 'ALTER': {
      const rest = words
        .slice(1)
        .filter((w) => !['OR', 'REPLACE', 'IF', 'NOT', 'EXISTS', 'TEMP', 'TEMPORARY'].includes(w));
      return /^[A-Z_]+$/.test(rest[0] ?? '') ? `${first} ${rest[0]}` : first;
    }
    default:
      return /^[A-Z_]+$/.test(first) ? first : 'OK';
  }
};
