import { significant, type Token } from '../../shared/sqlTokens';
import { clientTokens, userVariableName } from './clientText';
import { Cursor } from './cursor';
import type { Assignment, Statement } from './statement';

const OTHER: Assignment = { kind: 'other' };

/** One `SET` assignment's text, classified. */
const assignmentOf = (text: string): Assignment => {
  const tokens = clientTokens(text);
  if (!tokens) return OTHER;
  const c = new Cursor(significant(tokens), text);
  if (c.acceptWord('NAMES')) {
    const charset = c.name() ?? c.string();
    if (charset === undefined) return OTHER;
    const collation = c.acceptWord('COLLATE') ? (c.name() ?? c.string()) : undefined;
    return { kind: 'names', charset, collation };
  }
  if (c.acceptWord('CHARACTER')) {
    if (!c.acceptWord('SET')) return OTHER;
    const charset = c.name() ?? c.string();
    return charset === undefined ? OTHER : { kind: 'names', charset, collation: undefined };
  }
  if (c.acceptWord('CHARSET')) {
    const charset = c.name() ?? c.string();
    return charset === undefined ? OTHER : { kind: 'names', charset, collation: undefined };
  }
  const scope = c.acceptWord('GLOBAL', 'SESSION', 'LOCAL', 'PERSIST', 'PERSIST_ONLY');
  const t = c.peek();
  let target: Extract<Assignment, { kind: 'system' | 'user' }> | undefined;
  if (t?.kind === 'userVariable' && !scope) {
    c.at++;
    target = { kind: 'user', name: userVariableName(text, t), valueText: '' };
  } else if (t?.kind === 'systemVariable') {
    c.at++;
    target = { kind: 'system', name: c.text(t), valueText: '' };
  } else if (t?.kind === 'word' || t?.kind === 'identifier') {
    if (c.isWord('TRANSACTION')) return OTHER;
    let name = c.name()!;
    if (c.acceptSymbol('.')) name = `${name}.${c.name() ?? ''}`;
    target = { kind: 'system', name, valueText: '' };
  }
  if (!target || !c.acceptAssignment()) return OTHER;
  const valueText = c.rest();
  return valueText ? { ...target, valueText } : OTHER;
};

/** The assignments of `SET a = 1, b = (SELECT 2, 3)`: split at commas outside parentheses. */
export const setStatement = (sql: string, tokens: readonly Token[]): Statement => {
  const meaningful = significant(tokens);
  const pieces: string[] = [];
  let depth = 0;
  let from = meaningful[1]?.start ?? sql.length;
  for (const t of meaningful.slice(1)) {
    if (t.kind !== 'symbol') continue;
    const symbol = sql[t.start];
    if (symbol === '(') depth++;
    else if (symbol === ')') depth--;
    else if (symbol === ',' && depth === 0) {
      pieces.push(sql.slice(from, t.start).trim());
      from = t.end;
    }
  }
  pieces.push(sql.slice(from).trim());
  // `SET NAMES x COLLATE y` and `SET TRANSACTION …` are one piece each whatever follows.
  return {
    kind: 'set',
    assignments: pieces.filter(Boolean).map((text) => ({ text, assignment: assignmentOf(text) })),
  };
};
