import { unquoted } from '../../shared/sqlTokens';
import type { Cursor } from './cursor';
import {
  asConnectionFunction,
  type ConnectionExpression,
  type SelectItem,
  type Statement,
} from './statement';

/** One select-list item the connection can answer: `@@x`, DATABASE() and the like, or a literal. */
const expressionAt = (c: Cursor): ConnectionExpression | undefined => {
  const first = c.peek();
  if (!first) return undefined;
  switch (first.kind) {
    case 'systemVariable':
      c.at++;
      return { kind: 'variable', name: c.text(first) };
    case 'number':
      c.at++;
      return { kind: 'literal', value: Number(c.text(first)) };
    case 'string':
    case 'dquoted':
      c.at++;
      return { kind: 'literal', value: unquoted(c.sql, first) };
    case 'word': {
      if (c.isWord('NULL')) {
        c.at++;
        return { kind: 'literal', value: null };
      }
      const fn = asConnectionFunction(c.text(first));
      if (fn && c.isSymbol('(', 1) && c.isSymbol(')', 2)) {
        c.at += 3;
        return { kind: 'function', name: fn };
      }
      if ((fn === 'CURRENT_USER' || fn === 'SESSION_USER') && !c.isSymbol('(', 1)) {
        c.at++;
        return { kind: 'function', name: fn };
      }
      return undefined;
    }
    default:
      return undefined;
  }
};

/**
 * `SELECT @@x [AS name], DATABASE(), 'literal' … [FROM DUAL] [LIMIT n]` (what drivers and tools
 * send when they connect), after its SELECT; undefined for anything else.
 */
export const connectionSelect = (c: Cursor): Statement | undefined => {
  const items: SelectItem[] = [];
  for (;;) {
    const first = c.peek();
    const expression = expressionAt(c);
    if (!first || !expression) return undefined;
    const last = c.tokens[c.at - 1]!;
    let name =
      first.kind === 'string' || first.kind === 'dquoted'
        ? unquoted(c.sql, first)
        : c.sql.slice(first.start, last.end);
    const next = c.peek();
    if (c.acceptWord('AS')) {
      const alias = c.name() ?? c.string();
      if (alias === undefined) return undefined;
      name = alias;
    } else if (next?.kind === 'identifier' || next?.kind === 'string' || next?.kind === 'dquoted') {
      name = c.name() ?? c.string()!;
    } else if (next?.kind === 'word' && !c.isWord('LIMIT') && !c.isWord('FROM')) {
      name = c.name()!;
    }
    items.push({ expression, name });
    if (!c.acceptSymbol(',')) break;
  }
  // A SELECT of literals only is the engine's (SELECT 1 is how tools check a connection).
  if (items.every((i) => i.expression.kind === 'literal')) return undefined;
  if (c.acceptWord('FROM') && !c.acceptWord('DUAL')) return undefined;
  let noRows = false;
  if (c.acceptWord('LIMIT')) {
    const n = c.peek();
    if (n?.kind !== 'number') return undefined;
    c.at++;
    noRows = Number(c.text(n)) === 0;
  }
  return c.done ? { kind: 'connectionSelect', items, noRows } : undefined;
};
