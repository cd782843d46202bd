import { asConnectionFunction, mayReadConnection, type ConnectionExpression } from './classify';
import { isSignificant, quoteIdentifier, quoteString, tokenize, unquoteString } from './lexer';
import type { VariableValue } from './variables';

export const literalOf = (value: VariableValue) =>
  value === null ? 'NULL' : typeof value === 'number' ? String(value) : quoteString(value);

/** Words after which a select list is over, at the same parenthesis depth. */
const END_OF_SELECT_LIST = new Set([
  'FROM',
  'WHERE',
  'GROUP',
  'HAVING',
  'ORDER',
  'LIMIT',
  'UNION',
  'INTO',
  'WINDOW',
  'QUALIFY',
  'EXCEPT',
  'INTERSECT',
]);

/**
 * A statement for the engine with MySQL's connection values written in as literals: `@@x` system
 * variables and DATABASE(), USER(), CONNECTION_ID(), VERSION() …, which DuckDB does not know (or
 * answers for itself: USER() is 'duckdb'). A replaced select-list item keeps MySQL's column name
 * (`SELECT DATABASE(), 1` names its first column `DATABASE()`). Also lists the `@user` variables
 * the text reads (the engine takes `@name` as a parameter: a MySQL user variable).
 */
export const substituteConnectionValues = (
  sql: string,
  valueOf: (e: ConnectionExpression) => { value: VariableValue } | undefined,
): { sql: string; userVariables: string[] } => {
  if (!sql.includes('@') && !mayReadConnection(sql)) return { sql, userVariables: [] };
  const tokens = tokenize(sql);
  const significant = tokens.filter(isSignificant);
  const userVariables: string[] = [];
  const replacements: { start: number; end: number; text: string }[] = [];
  // Per parenthesis depth: whether the tokens are in a select list.
  const selectList: boolean[] = [false];
  for (let i = 0; i < significant.length; i++) {
    const t = significant[i]!;
    const depth = selectList.length - 1;
    if (t.kind === 'punct' && t.text === '(') selectList.push(false);
    else if (t.kind === 'punct' && t.text === ')') {
      if (selectList.length > 1) selectList.pop();
    } else if (t.kind === 'word') {
      const word = t.text.toUpperCase();
      if (word === 'SELECT') selectList[depth] = true;
      else if (END_OF_SELECT_LIST.has(word)) selectList[depth] = false;
    }
    if (t.kind === 'userVariable') {
      const raw = t.text.slice(1);
      userVariables.push(/^[`'"]/.test(raw) ? unquoteString(raw) : raw);
      continue;
    }
    let expression: ConnectionExpression | undefined;
    let last = i;
    const fn = t.kind === 'word' ? asConnectionFunction(t.text) : undefined;
    if (t.kind === 'systemVariable') expression = { kind: 'variable', name: t.text };
    else if (
      fn &&
      significant[i + 1]?.text === '(' &&
      significant[i + 2]?.text === ')' &&
      significant[i - 1]?.text !== '.'
    ) {
      expression = { kind: 'function', name: fn };
      last = i + 2;
    }
    if (!expression) continue;
    const known = valueOf(expression);
    if (!known) continue;
    const end = significant[last]!.end;
    let text = literalOf(known.value);
    const before = significant[i - 1];
    const after = significant[last + 1];
    const itemStart =
      selectList[depth] &&
      before !== undefined &&
      ((before.kind === 'word' && /^(SELECT|DISTINCT|ALL)$/i.test(before.text)) || before.text === ',');
    const itemEnd =
      after === undefined ||
      after.text === ',' ||
      after.text === ';' ||
      (after.kind === 'word' && END_OF_SELECT_LIST.has(after.text.toUpperCase()));
    if (itemStart && itemEnd) text += ` AS ${quoteIdentifier(sql.slice(t.start, end))}`;
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
