import { SqlError, SqlErrorCode } from './errors';

/**
 * MindsDB speaks MySQL: `backticks` quote identifiers, "double quotes" quote strings, `:name` and
 * `@name` are placeholders. DuckDB speaks PostgreSQL. This rewrites one into the other token by
 * token (never inside string literals or comments), and returns the placeholders it found.
 */
export const toDuckDbDialect = (sql: string): { sql: string; placeholders: string[] } => {
  let out = '';
  const placeholders: string[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === "'") {
      const end = scanQuoted(sql, i, "'");
      out += sql.slice(i, end);
      i = end;
    } else if (c === '"') {
      const end = scanQuoted(sql, i, '"');
      const body = sql.slice(i + 1, end - 1).replace(/""/g, '"');
      // An alias (`select 1 "two"`, `as "two"`) stays an identifier; anywhere else it is a string.
      out += isAliasPosition(out) ? `"${body.replace(/"/g, '""')}"` : `'${body.replace(/'/g, "''")}'`;
      i = end;
    } else if (c === '`') {
      const end = scanQuoted(sql, i, '`');
      const body = sql.slice(i + 1, end - 1).replace(/``/g, '`');
      out += `"${body.replace(/"/g, '""')}"`;
      i = end;
    } else if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? n : end;
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
      out += ' ';
    } else if (
      (c === ':' || c === '@') &&
      next !== undefined &&
      /[A-Za-z_]/.test(next) &&
      sql[i - 1] !== ':' &&
      sql[i - 1] !== '@' &&
      !(c === ':' && next === ':')
    ) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))!;
      placeholders.push(m[0]);
      out += `$${m[0]}`;
      i += 1 + m[0].length;
    } else {
      out += c;
      i++;
    }
  }
  return { sql: out, placeholders };
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

const isAliasPosition = (before: string) => {
  const trimmed = before.trimEnd();
  const word = /([A-Za-z_][A-Za-z0-9_]*)$/.exec(trimmed)?.[1];
  if (word)
    return (
      word.toUpperCase() === 'AS' ||
      (!VALUE_CONTEXT.has(word.toUpperCase()) && trimmed.length < before.length)
    );
  // After a closing parenthesis, a number or a quoted token, a quoted word names the column.
  return /[)\d'"]$/.test(trimmed) && trimmed.length < before.length;
};

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

/** Leading whitespace, trailing semicolons and whitespace are not part of a statement. */
export const trimStatement = (sql: string) => sql.trim().replace(/[;\s]+$/, '');

/** The first keyword, upper-cased (comments and parentheses skipped). */
export const leadingKeyword = (sql: string) => {
  const stripped = sql.replace(/^(\s|--[^\n]*\n|\/\*[\s\S]*?\*\/|\()*/, '');
  return (/^[A-Za-z_]+/.exec(stripped)?.[0] ?? '').toUpperCase();
};

/**
 * `project.model.3` names a model version; DuckDB would read `.3` as a number, so the version is
 * quoted as an identifier (`project.model."3"`). Only outside string literals.
 */
export const quoteModelVersions = (sql: string) =>
  sql
    .split(/('(?:[^']|'')*')/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part.replace(
            /((?:[A-Za-z_][A-Za-z0-9_]*|"(?:[^"]|"")+")\s*\.\s*(?:[A-Za-z_][A-Za-z0-9_]*|"(?:[^"]|"")+"))\.(\d+)\b/g,
            '$1."$2"',
          ),
    )
    .join('');
