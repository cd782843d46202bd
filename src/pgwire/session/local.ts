import { pgTypeOf, type PgColumnType } from '../protocol/types';
import type { ConnectionValues, PgStatement } from './pgText';
import { SettingRefused, type Settings } from './settings';

/**
 * The statements a PostgreSQL connection answers itself, as PostgreSQL would: SET/RESET/SHOW of
 * run-time parameters, transaction control, DISCARD and DEALLOCATE, and a bare `SELECT version()`
 * and its kind (whose column PostgreSQL names after the function). Everything else is the engine's.
 */
export type LocalAnswer =
  | { kind: 'rows'; columns: { name: string; type: PgColumnType }[]; rows: unknown[][]; tag: string }
  | { kind: 'command'; tag: string; reported?: [string, string][] }
  | {
      kind: 'transaction';
      tag: string;
      action: 'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackToSavepoint';
      /** The savepoint named (SAVEPOINT, RELEASE, ROLLBACK TO). */
      savepoint?: string;
    }
  /** DISCARD ALL: the session as new (prepared statements, portals, parameters). */
  | { kind: 'discardAll'; tag: string }
  | { kind: 'deallocate'; tag: string; name: string | null }
  | { kind: 'error'; code: string; message: string };

const TEXT = pgTypeOf('VARCHAR');

/**
 * SAVEPOINT, RELEASE [SAVEPOINT] or ROLLBACK TO [SAVEPOINT], the savepoint's name the first of
 * `parts` (after SAVEPOINT): unquoted, folded as PostgreSQL folds names.
 */
const onSavepoint = (
  tag: string,
  action: 'savepoint' | 'release' | 'rollbackToSavepoint',
  parts: readonly string[],
): LocalAnswer => {
  const name = (parts[0]?.toUpperCase() === 'SAVEPOINT' ? parts[1] : parts[0]) ?? '';
  const savepoint = name.startsWith('"') ? name.slice(1, -1).split('""').join('"') : name.toLowerCase();
  return { kind: 'transaction', tag, action, savepoint };
};

/** A SET value as written: quotes removed, list items joined as PostgreSQL shows them. */
const valueOf = (parts: readonly string[]): string | null => {
  if (parts.length === 1 && parts[0]!.toUpperCase() === 'DEFAULT') return null;
  const items: string[] = [];
  let current = '';
  for (const p of parts) {
    if (p === ',') {
      items.push(current);
      current = '';
    } else if (p.startsWith("'") && p.endsWith("'")) current += p.slice(1, -1).split("''").join("'");
    else if (p.startsWith('"') && p.endsWith('"')) current += p.slice(1, -1).split('""').join('"');
    else current += p;
  }
  items.push(current);
  return items.join(', ');
};

const set = (s: PgStatement, settings: Settings): LocalAnswer => {
  const { words, parts } = s;
  let at = 1;
  if (words[at] === 'SESSION' || words[at] === 'LOCAL') at++;
  // Transaction characteristics and roles: accepted, as every statement runs on its own anyway.
  if (
    words[at] === 'TRANSACTION' ||
    words[at] === 'CHARACTERISTICS' ||
    words[at] === 'ROLE' ||
    words[at] === 'SESSION'
  )
    return { kind: 'command', tag: 'SET' };
  let name: string;
  let valueParts: string[];
  if (words[at] === 'TIME' && words[at + 1] === 'ZONE') {
    name = 'TimeZone';
    valueParts = parts.slice(at + 2);
    if (words[at + 2] === 'LOCAL') valueParts = ['DEFAULT'];
  } else if (words[at] === 'NAMES') {
    name = 'client_encoding';
    valueParts = parts.slice(at + 1);
  } else {
    const to = words.findIndex((w, i) => i > at && (w === 'TO' || w === '='));
    if (to < 0)
      return {
        kind: 'error',
        code: '42601',
        message: `syntax error in SET: expected TO or = (${s.original})`,
      };
    name = parts.slice(at, to).join('');
    valueParts = parts.slice(to + 1);
  }
  if (!valueParts.length)
    return { kind: 'error', code: '42601', message: `syntax error in SET: no value for ${name}` };
  try {
    const changed = settings.set(name, valueOf(valueParts));
    return {
      kind: 'command',
      tag: 'SET',
      reported: changed.reported ? [[changed.name, settings.get(changed.name)!]] : undefined,
    };
  } catch (error) {
    if (error instanceof SettingRefused)
      return { kind: 'error', code: error.sqlState, message: error.message };
    throw error;
  }
};

const reset = (s: PgStatement, settings: Settings): LocalAnswer => {
  const name = s.parts.slice(1).join('');
  if (name.toUpperCase() === 'ALL') return { kind: 'command', tag: 'RESET', reported: settings.resetAll() };
  const changed = settings.set(name, null);
  return {
    kind: 'command',
    tag: 'RESET',
    reported: changed.reported ? [[changed.name, settings.get(changed.name)!]] : undefined,
  };
};

/** SHOW of a run-time parameter; undefined for MindsDB's SHOW statements (SHOW DATABASES, SHOW MODELS …). */
const show = (s: PgStatement, settings: Settings): LocalAnswer | undefined => {
  const rest = s.words.slice(1).join(' ');
  if (rest === 'ALL')
    return {
      kind: 'rows',
      columns: [
        { name: 'name', type: TEXT },
        { name: 'setting', type: TEXT },
        { name: 'description', type: TEXT },
      ],
      rows: settings.all().map(([n, v]) => [n, v, '']),
      tag: 'SHOW',
    };
  const name =
    rest === 'TIME ZONE'
      ? 'TimeZone'
      : rest === 'TRANSACTION ISOLATION LEVEL'
        ? 'transaction_isolation'
        : s.parts.slice(1).join('');
  const value = settings.get(name);
  if (value === undefined) return undefined;
  return { kind: 'rows', columns: [{ name: name.toLowerCase(), type: TEXT }], rows: [[value]], tag: 'SHOW' };
};

/** `SELECT version()`, `SELECT current_user` … alone: answered with PostgreSQL's column name. */
const connectionSelect = (s: PgStatement, values: ConnectionValues): LocalAnswer | undefined => {
  let words = s.words.slice(1);
  let alias: string | undefined;
  if (words.length >= 2 && words[words.length - 2] === 'AS') {
    alias = s.parts[s.parts.length - 1]!.replace(/^"(.*)"$/, '$1');
    words = words.slice(0, -2);
  }
  if (words[0] === 'PG_CATALOG' && words[1] === '.') words = words.slice(2);
  const call = words.join('');
  const answers: Record<string, [string, unknown, PgColumnType]> = {
    'VERSION()': ['version', values.version, TEXT],
    'CURRENT_DATABASE()': ['current_database', values.database, TEXT],
    'CURRENT_SCHEMA()': ['current_schema', values.schema, TEXT],
    CURRENT_SCHEMA: ['current_schema', values.schema, TEXT],
    CURRENT_CATALOG: ['current_catalog', values.database, TEXT],
    CURRENT_USER: ['current_user', values.user, TEXT],
    SESSION_USER: ['session_user', values.user, TEXT],
    'PG_BACKEND_PID()': ['pg_backend_pid', values.backendPid, pgTypeOf('INTEGER')],
  };
  const found = answers[call];
  if (!found) return undefined;
  const [name, value, type] = found;
  return { kind: 'rows', columns: [{ name: alias ?? name, type }], rows: [[value]], tag: 'SELECT 1' };
};

export const answerLocally = (
  s: PgStatement,
  settings: Settings,
  values: ConnectionValues,
): LocalAnswer | undefined => {
  const [first, second] = s.words;
  switch (first) {
    case 'SET':
      return set(s, settings);
    case 'RESET':
      return reset(s, settings);
    case 'SHOW':
      return show(s, settings);
    case 'BEGIN':
      return { kind: 'transaction', tag: 'BEGIN', action: 'begin' };
    case 'START':
      return second === 'TRANSACTION' ? { kind: 'transaction', tag: 'BEGIN', action: 'begin' } : undefined;
    case 'COMMIT':
    case 'END':
      return { kind: 'transaction', tag: 'COMMIT', action: 'commit' };
    case 'ROLLBACK':
    case 'ABORT':
      return s.words.includes('TO')
        ? onSavepoint('ROLLBACK', 'rollbackToSavepoint', s.parts.slice(s.words.indexOf('TO') + 1))
        : { kind: 'transaction', tag: 'ROLLBACK', action: 'rollback' };
    case 'SAVEPOINT':
      return onSavepoint('SAVEPOINT', 'savepoint', s.parts.slice(1));
    case 'RELEASE':
      return onSavepoint('RELEASE', 'release', s.parts.slice(1));
    case 'DISCARD':
      return second === 'ALL' || second === undefined
        ? { kind: 'discardAll', tag: 'DISCARD ALL' }
        : { kind: 'command', tag: `DISCARD ${second}` };
    case 'DEALLOCATE': {
      const name = s.parts[second === 'PREPARE' ? 2 : 1];
      if (!name)
        return { kind: 'error', code: '42601', message: 'syntax error in DEALLOCATE: no statement name' };
      return name.toUpperCase() === 'ALL'
        ? { kind: 'deallocate', tag: 'DEALLOCATE ALL', name: null }
        : { kind: 'deallocate', tag: 'DEALLOCATE', name: name.replace(/^"(.*)"$/, '$1') };
    }
    case 'SELECT':
      return connectionSelect(s, values);
    default:
      return undefined;
  }
};
