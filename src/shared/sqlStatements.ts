import { isSignificant, SqlSyntaxError, tokenize, type Token } from './sqlTokens';

/** The tokens of a text up to a quote never closed (all of it when there is none), and where they end. */
export const readableTokens = (sql: string): { tokens: readonly Token[]; end: number } => {
  try {
    return { tokens: tokenize(sql, 'mysql-client'), end: sql.length };
  } catch (error) {
    if (!(error instanceof SqlSyntaxError)) throw error;
    return { tokens: tokenize(sql.slice(0, error.offset), 'mysql-client'), end: error.offset };
  }
};

/**
 * The statements of a multi-statement text, each without its `;` (empty ones dropped). From a quote
 * never closed on, the rest of the text is one last statement: the ones before it run, and the
 * engine refuses that one, as MySQL does. One reading of `;` for every text holding several
 * statements: a MySQL client's multi-statement query, a job's statements.
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

/** A stored text's statements (a job's, a trigger's), trimmed, blanks dropped (MindsDB's split_sql). */
export const statementTexts = (text: string): string[] =>
  splitStatements(text)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
