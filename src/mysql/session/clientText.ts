import { SqlSyntaxError, tokenize, unquoted, type Token } from '../../shared/sqlTokens';
import { readableTokens } from '../../shared/sqlStatements';

export { splitStatements } from '../../shared/sqlStatements';

/**
 * A client's text as the shared tokenizer reads MySQL clients (`mysql-client`), or undefined when a
 * quote is never closed: such a statement is left as it is, for the engine to refuse (1064, as over
 * HTTP).
 */
export const clientTokens = (sql: string): readonly Token[] | undefined => {
  try {
    return tokenize(sql, 'mysql-client');
  } catch (error) {
    if (error instanceof SqlSyntaxError) return undefined;
    throw error;
  }
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
