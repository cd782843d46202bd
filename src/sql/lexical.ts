import { quoteIdent, quoteString } from '../shared/quoting';
import { DATE_FORMAT_FUNCTIONS, duckDbDateFormat } from './pipeline/mysqlFormats';
import { textOf, tokenize, unquoted, type Token } from '../shared/sqlTokens';
import { ownEntry } from '../shared/ownEntry';

/**
 * MindsDB speaks MySQL: `backticks` quote identifiers, "double quotes" quote strings, `:name` and
 * `@name` are placeholders. DuckDB speaks PostgreSQL. This rewrites one into the other token by
 * token (never inside string literals or comments), and returns the placeholders it found, and how
 * many `?` and `$1` it passed on (DuckDB's positional parameters, which nothing binds here).
 */
export const toDuckDbDialect = (sql: string): { sql: string; placeholders: string[]; positional: number } => {
  const parts: string[] = [];
  const placeholders: string[] = [];
  let positional = 0;
  let dollarEnd = -1;
  // What precedes a double-quoted token decides whether it is an alias or a string: the last
  // significant token (a word, from its first letter; else its last character), and blanks after it.
  let lastWord: string | undefined;
  let lastChar = '';
  let blankAfter = false;
  // The function each open parenthesis belongs to (its name, upper case), for format literals.
  const calls: (string | undefined)[] = [];
  const isAliasPosition = () => {
    if (lastWord !== undefined) {
      const word = lastWord.toUpperCase();
      return word === 'AS' || (!VALUE_CONTEXT.has(word) && blankAfter);
    }
    // After a closing parenthesis, a number or a quoted token, a quoted word names the column.
    return /^[)\d'"]$/.test(lastChar) && blankAfter;
  };
  const emitted = (text: string, kind: 'blank' | 'other') => {
    parts.push(text);
    if (kind === 'blank') {
      blankAfter = true;
      return;
    }
    blankAfter = false;
    const letter = text.search(/[A-Za-z_]/);
    lastWord =
      kind === 'other' && /^[A-Za-z0-9_]+$/.test(text) && letter !== -1 ? text.slice(letter) : undefined;
    lastChar = text[text.length - 1] ?? '';
  };
  /** The date-format function whose argument a string right after a comma is (DATE_FORMAT & co.). */
  const formatOfArgument = () =>
    lastChar === ',' ? ownEntry(DATE_FORMAT_FUNCTIONS, calls[calls.length - 1] ?? '') : undefined;
  for (const t of tokenize(sql, 'mysql')) {
    const text = textOf(sql, t);
    switch (t.kind) {
      case 'blank':
        emitted(text, 'blank');
        break;
      case 'comment':
        // A block comment separates what surrounds it; a line comment ends at its line's end.
        if (text.startsWith('/*')) emitted(' ', 'blank');
        break;
      case 'string': {
        // A MySQL date format given to DATE_FORMAT & co. is written in DuckDB's specifiers.
        const use = formatOfArgument();
        if (use) emitted(quoteString(duckDbDateFormat(mysqlStringValue(text), use)), 'other');
        // MySQL's backslash escapes become the characters they stand for; DuckDB reads none.
        else emitted(text.includes('\\') ? quoteString(mysqlStringValue(text)) : text, 'other');
        break;
      }
      case 'dquoted': {
        const body = mysqlStringValue(text);
        const use = formatOfArgument();
        // An alias (`select 1 "two"`, `as "two"`) stays an identifier; anywhere else it is a string.
        emitted(
          isAliasPosition() ? quoteIdent(body) : quoteString(use ? duckDbDateFormat(body, use) : body),
          'other',
        );
        break;
      }
      case 'identifier':
        emitted(quoteIdent(unquoted(sql, t)), 'other');
        break;
      case 'placeholder':
        placeholders.push(text.slice(1));
        emitted(`$${text.slice(1)}`, 'other');
        break;
      default:
        if (text === '(') calls.push(lastWord?.toUpperCase());
        else if (text === ')') calls.pop();
        else if (text === '?' || (t.start === dollarEnd && /^\d+$/.test(text))) positional++;
        // Not inside a name: MySQL's names may hold `$` (`price$1`).
        else if (text === '$' && !/[\w$]/.test(sql[t.start - 1] ?? '')) dollarEnd = t.end;
        emitted(text, 'other');
    }
  }
  return { sql: parts.join(''), placeholders, positional };
};

const ESCAPES: Record<string, string> = {
  '0': '\0',
  b: '\b',
  n: '\n',
  r: '\r',
  t: '\t',
  Z: '\x1a',
};

/**
 * The value of a MySQL quoted string (or double-quoted text): doubled quotes and MySQL's backslash
 * escapes undone (\\ \' \" \0 \b \n \r \t \Z). Any other backslash stays as written: `\%` and `\_`
 * are LIKE's own escapes (MySQL keeps them too), and `'\xAA'::BLOB` is DuckDB's blob literal.
 */
const mysqlStringValue = (quoted: string) => {
  const quote = quoted[0]!;
  const body = quoted.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && i + 1 < body.length) {
      const next = body[++i]!;
      out +=
        ESCAPES[next] ??
        (next === quote || next === '\\' || next === "'" || next === '"' ? next : `\\${next}`);
    } else if (c === quote && body[i + 1] === quote) {
      out += quote;
      i++;
    } else out += c;
  }
  return out;
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
 * quoted as an identifier (`project.model."3"`). Only outside string literals, and only a version
 * written right after `name.name.` (no blanks before the digits, nor before the second dot).
 */
export const quoteModelVersions = (sql: string) => {
  // Most queries have no `.<digit>` at all.
  if (!/\.\d/.test(sql)) return sql;
  const parts: string[] = [];
  let copied = 0;
  const tokens = tokenize(sql, 'duckdb');
  const isName = (t: Token | undefined) => t !== undefined && (t.kind === 'word' || t.kind === 'identifier');
  const isDot = (t: Token | undefined) => t !== undefined && t.kind === 'symbol' && sql[t.start] === '.';
  const hasLetter = (t: Token) => t.kind === 'identifier' || /[A-Za-z_]/.test(textOf(sql, t));
  const startsWithLetter = (t: Token) => t.kind === 'identifier' || /^[A-Za-z_]/.test(textOf(sql, t));
  const meaningful = tokens.filter((t) => t.kind !== 'blank');
  for (let k = 4; k < meaningful.length; k++) {
    const project = meaningful[k - 4];
    const dot1 = meaningful[k - 3];
    const name = meaningful[k - 2];
    const dot2 = meaningful[k - 1];
    const version = meaningful[k];
    if (
      version!.kind === 'word' &&
      /^\d+$/.test(textOf(sql, version!)) &&
      version!.start === dot2!.end &&
      isDot(dot2) &&
      dot2!.start === name!.end &&
      isName(name) &&
      startsWithLetter(name!) &&
      isDot(dot1) &&
      isName(project) &&
      hasLetter(project!)
    ) {
      parts.push(sql.slice(copied, version!.start), `"${textOf(sql, version!)}"`);
      copied = version!.end;
    }
  }
  parts.push(sql.slice(copied));
  return parts.join('');
};
