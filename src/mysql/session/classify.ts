import { significant } from '../../shared/sqlTokens';
import { clientTokens } from './clientText';
import { Cursor } from './cursor';
import { connectionSelect } from './parseSelect';
import { setStatement } from './parseSet';
import { show } from './parseShow';
import { mayReadConnection, type Statement } from './statement';

const kill = (c: Cursor): Statement | undefined => {
  const scope = c.acceptWord('QUERY', 'CONNECTION');
  const n = c.peek();
  if (n?.kind !== 'number' || !/^\d+$/.test(c.text(n))) return undefined;
  c.at++;
  return c.done
    ? { kind: 'kill', scope: scope === 'QUERY' ? 'query' : 'connection', id: Number(c.text(n)) }
    : undefined;
};

const transaction = (c: Cursor): Statement | undefined => {
  const first = c.acceptWord('BEGIN', 'START', 'COMMIT', 'ROLLBACK');
  if (first === 'START' && !c.acceptWord('TRANSACTION')) return undefined;
  if (first === 'ROLLBACK' && (c.isWord('TO') || (c.isWord('WORK') && c.isWord('TO', 1)))) return undefined;
  // BEGIN [WORK], START TRANSACTION [READ ONLY | WITH CONSISTENT SNAPSHOT …], COMMIT/ROLLBACK [WORK] [AND [NO] CHAIN] …
  return { kind: 'transaction' };
};

const LOCAL_KEYWORDS = new Set(['SET', 'SHOW', 'KILL', 'BEGIN', 'START', 'COMMIT', 'ROLLBACK']);

/**
 * Sorts one statement: what the connection answers itself, and everything else for the engine.
 * Unrecognised shapes of SHOW, SELECT or SET go to the engine unchanged, which answers or refuses
 * them as it does over HTTP (a quote never closed too).
 */
export const classify = (sql: string): Statement => {
  // Most statements are the engine's: a glance at the first word and the text decides without tokens.
  const first = /^[\s(]*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
  if (first === 'SELECT' ? !mayReadConnection(sql) : first !== undefined && !LOCAL_KEYWORDS.has(first))
    return { kind: 'engine', sql };
  const tokens = clientTokens(sql);
  if (!tokens) return { kind: 'engine', sql };
  const c = new Cursor(significant(tokens), sql);
  const keyword = c.acceptWord('SELECT', 'SET', 'SHOW', 'KILL', 'BEGIN', 'START', 'COMMIT', 'ROLLBACK');
  let statement: Statement | undefined;
  switch (keyword) {
    case 'SELECT':
      statement = connectionSelect(c);
      break;
    case 'SET':
      statement = setStatement(sql, tokens);
      break;
    case 'SHOW':
      statement = show(c);
      break;
    case 'KILL':
      statement = kill(c);
      break;
    case 'BEGIN':
    case 'START':
    case 'COMMIT':
    case 'ROLLBACK':
      c.at = 0;
      statement = transaction(c);
      break;
    default:
      statement = undefined;
  }
  return statement ?? { kind: 'engine', sql };
};
