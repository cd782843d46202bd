import {
  closingParen,
  ENDS_FROM_CLAUSE,
  isKeyword,
  isRelationName,
  textOf,
  type Token,
} from '../../shared/sqlTokens';

/**
 * Functions in a FROM clause, PostgreSQL's way in DuckDB's words. PostgreSQL lets any function
 * stand as a relation, and an alias without a column list names its one column too:
 * `FROM generate_series(1, 3) AS i` has a column `i`, and `FROM string_to_array(x, ',') s` a row
 * with the array in `s`. Grafana's metadata queries read the search path so. DuckDB names the
 * column after the function (the alias names only the row), and takes only table functions there.
 * So, in a FROM clause, `f(…) [AS] a` becomes `f(…) AS a(a)` for a set-returning function and
 * `unnest([f(…)]) AS a(a)` (one row holding the value) for any other.
 */

/**
 * DuckDB's table functions that PostgreSQL's set-returning functions of the same name match, and
 * `range` (DuckDB's generate_series without its last value): made scalar, it would build its whole
 * list in one call, which neither DuckDB's memory limit nor its interrupt reaches.
 */
const SET_RETURNING = new Set(['generate_series', 'generate_subscripts', 'unnest', 'range']);

/** Replacements (by token start) that make each aliased function in a FROM clause DuckDB's. */
export const fromFunctionEdits = (sql: string, words: readonly Token[]): Map<number, string> => {
  const edits = new Map<number, string>();
  // Whether the clause being read at each parenthesis depth is a FROM clause.
  const inFrom: boolean[] = [false];
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!;
    const text = textOf(sql, t);
    if (text === '(') {
      inFrom.push(false);
      continue;
    }
    if (text === ')') {
      if (inFrom.length > 1) inFrom.pop();
      continue;
    }
    const upper = text.toUpperCase();
    if (t.kind === 'word' && upper === 'FROM') {
      inFrom[inFrom.length - 1] = true;
      continue;
    }
    if (t.kind === 'word' && ENDS_FROM_CLAUSE.has(upper)) {
      inFrom[inFrom.length - 1] = false;
      continue;
    }
    if (!inFrom[inFrom.length - 1] || t.kind !== 'word') continue;
    const before = words[i - 1] ? textOf(sql, words[i - 1]!).toUpperCase() : '';
    if (before !== 'FROM' && before !== ',' && before !== 'JOIN') continue;
    if (words[i + 1] === undefined || textOf(sql, words[i + 1]!) !== '(') continue;
    const close = closingParen(sql, words, i + 1);
    if (close < 0) continue;
    // `AS a` or `a`, and no column list after it (with one, DuckDB reads it as PostgreSQL does).
    const hasAs = isKeyword(sql, words[close + 1], 'AS');
    const aliasAt = hasAs ? close + 2 : close + 1;
    const alias = words[aliasAt];
    if (!isRelationName(sql, alias) || (words[aliasAt + 1] && textOf(sql, words[aliasAt + 1]!) === '('))
      continue;
    const name = textOf(sql, alias!);
    const named = `${hasAs ? '' : 'AS '}${name}(${name})`;
    if (SET_RETURNING.has(text.toLowerCase())) edits.set(alias!.start, named);
    else {
      edits.set(t.start, `unnest([${text}`);
      edits.set(words[close]!.start, ')])');
      edits.set(alias!.start, named);
    }
    i = aliasAt;
  }
  return edits;
};
