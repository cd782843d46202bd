import { SqlSyntaxError, tokenize, unquoted, type Token } from '../../shared/sqlTokens';

/**
 * A client's text as the shared tokenizer reads MySQL clients (`mysql-client`), or undefined when a
 * quote is never closed: such a statement is left as it is, for the engine to refuse (1064, as over
 * HTTP).
 */
export const clientTokens = (sql: string): Token[] | undefined => {
  try {
    return tokenize(sql, 'mysql-client');
  } catch (error) {
    if (error instanceof SqlSyntaxError) return undefined;
    throw error;
  }
};

/** The tokens of a text up to a quote never closed (all of it when there is none), and where they end. */
const readableTokens = (sql: string): { tokens: Token[]; end: number } => {
  try {
    return { tokens: tokenize(sql, 'mysql-client'), end: sql.length };
  } catch (error) {
    if (!(error instanceof SqlSyntaxError)) throw error;
    return { tokens: tokenize(sql.slice(0, error.offset), 'mysql-client'), end: error.offset };
  }
};

const isSignificant = (t: Token) => t.kind !== 'blank' && t.kind !== 'comment';

/**
 * The statements of a multi-statement text, each without its `;` (empty ones dropped). From a quote
 * never closed on, the rest of the text is one last statement: the ones before it run, and the
 * engine refuses that one, as MySQL does.
 */
export const splitStatements = (sql: string): string[] => {
  const { tokens, end } = readableTokens(sql);
  const statements: string[] = [];
  let from = 0;
  let significant = false;
  for (const t of tokens) {
    if (t.kind === 'symbol' && sql[t.start] === ';') {
      if (significant) statements.push(sql.slice(from, t.start));
      from = t.end;
      significant = false;
    } else if (isSignificant(t)) significant = true;
  }
  if (significant || end < sql.length) statements.push(sql.slice(from));
  return statements;
};

/** The name `?` number `i` (0-based) is passed to the engine under. */
export const placeholderName = (i: number) => `__mysql_param_${i + 1}`;

/** Replaces each `?` with the engine's named placeholder (`:__mysql_param_1`, …); counts them. */
export const namePlaceholders = (sql: string): { sql: string; count: number } => {
  let count = 0;
  const parts: string[] = [];
  let at = 0;
  for (const t of readableTokens(sql).tokens) {
    if (t.kind !== 'placeholder' || sql[t.start] !== '?') continue;
    parts.push(sql.slice(at, t.start), `:${placeholderName(count++)}`);
    at = t.end;
  }
  parts.push(sql.slice(at));
  return { sql: count === 0 ? sql : parts.join(''), count };
};

/** A `userVariable` token's name: `@x` → x, `` @`my var` `` → my var. */
export const userVariableName = (sql: string, t: Token) => {
  const name: Token = { kind: 'identifier', start: t.start + 1, end: t.end };
  return /[`'"]/.test(sql[name.start]!) ? unquoted(sql, name) : sql.slice(name.start, name.end);
};
