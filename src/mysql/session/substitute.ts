import { SELECT_LIST_ENDS } from '../../shared/sqlLabels';
import { quoteMysqlIdent, quoteString } from '../../shared/quoting';
import { isKeyword, outsideNativeQueries, significant, textOf, type Token } from '../../shared/sqlTokens';
import { clientTokens, userVariableName } from './clientText';
import { asConnectionFunction, mayReadConnection, type ConnectionExpression } from './statement';
import type { VariableValue } from './variables';

export const literalOf = (value: VariableValue) =>
  value === null ? 'NULL' : typeof value === 'number' ? String(value) : quoteString(value);

/** Words a select-list item may follow (besides a comma). */
const SELECT_LIST_START = new Set(['SELECT', 'DISTINCT', 'ALL']);

/**
 * A statement for the engine with MySQL's connection values written in as literals: `@@x` system
 * variables and DATABASE(), USER(), CONNECTION_ID(), VERSION() …, which DuckDB does not know (or
 * answers for itself: USER() is 'duckdb'). A replaced select-list item keeps MySQL's column name
 * (`SELECT DATABASE(), 1` names its first column `DATABASE()`). Also lists the `@user` variables
 * the text reads (the engine takes `@name` as a parameter: a MySQL user variable). A text with a
 * quote never closed goes as it is (the engine refuses it).
 */
export const substituteConnectionValues = (
  sql: string,
  valueOf: (e: ConnectionExpression) => { value: VariableValue } | undefined,
): { sql: string; userVariables: string[] } => {
  if (!sql.includes('@') && !mayReadConnection(sql)) return { sql, userVariables: [] };
  const tokens = clientTokens(sql);
  if (!tokens) return { sql, userVariables: [] };
  // A native query's text goes to its database as written: its VERSION() is that server's.
  const meaningful = outsideNativeQueries(sql, significant(tokens));
  const isSymbol = (t: Token | undefined, symbol: string) => t?.kind === 'symbol' && sql[t.start] === symbol;
  const isWordIn = (t: Token | undefined, words: ReadonlySet<string>) =>
    t?.kind === 'word' && words.has(textOf(sql, t).toUpperCase());
  const userVariables: string[] = [];
  const replacements: { start: number; end: number; text: string }[] = [];
  // Per parenthesis depth: whether the tokens are in a select list.
  const selectList: boolean[] = [false];
  for (let i = 0; i < meaningful.length; i++) {
    const t = meaningful[i]!;
    const depth = selectList.length - 1;
    if (isSymbol(t, '(')) selectList.push(false);
    else if (isSymbol(t, ')')) {
      if (selectList.length > 1) selectList.pop();
    } else if (isKeyword(sql, t, 'SELECT')) selectList[depth] = true;
    else if (isWordIn(t, SELECT_LIST_ENDS)) selectList[depth] = false;
    if (t.kind === 'userVariable') {
      userVariables.push(userVariableName(sql, t));
      continue;
    }
    let expression: ConnectionExpression | undefined;
    let last = i;
    const fn = t.kind === 'word' ? asConnectionFunction(textOf(sql, t)) : undefined;
    if (t.kind === 'systemVariable') expression = { kind: 'variable', name: textOf(sql, t) };
    else if (
      fn &&
      isSymbol(meaningful[i + 1], '(') &&
      isSymbol(meaningful[i + 2], ')') &&
      !isSymbol(meaningful[i - 1], '.')
    ) {
      expression = { kind: 'function', name: fn };
      last = i + 2;
    }
    if (!expression) continue;
    const known = valueOf(expression);
    if (!known) continue;
    const end = meaningful[last]!.end;
    let text = literalOf(known.value);
    const before = meaningful[i - 1];
    const after = meaningful[last + 1];
    const itemStart = selectList[depth] && (isWordIn(before, SELECT_LIST_START) || isSymbol(before, ','));
    const itemEnd =
      after === undefined ||
      isSymbol(after, ',') ||
      isSymbol(after, ';') ||
      isWordIn(after, SELECT_LIST_ENDS);
    if (itemStart && itemEnd) text += ` AS ${quoteMysqlIdent(sql.slice(t.start, end))}`;
    replacements.push({ start: t.start, end, text });
    i = last;
  }
  if (replacements.length === 0) return { sql, userVariables };
  let out = '';
  let at = 0;
  for (const r of replacements) {
    out += sql.slice(at, r.start) + r.text;
    at = r.end;
  }
  return { sql: out + sql.slice(at), userVariables };
};
