import { isSignificant, tokenize, unquoteIdentifier, unquoteString, type Token } from './lexer';

/** What a select-list item of a connection-level SELECT reads. */
export type ConnectionExpression =
  | { kind: 'variable'; name: string }
  | { kind: 'function'; name: ConnectionFunction }
  | { kind: 'literal'; value: string | number | null };

export type SelectItem = { expression: ConnectionExpression; name: string };

export type Assignment =
  | { kind: 'system'; name: string; valueText: string }
  | { kind: 'user'; name: string; valueText: string }
  | { kind: 'names'; charset: string; collation: string | undefined }
  | { kind: 'other' };

/** A statement the MySQL connection answers (or helps answer) itself; `engine` is everything else. */
export type Statement =
  | { kind: 'connectionSelect'; items: SelectItem[]; noRows: boolean }
  | { kind: 'set'; assignments: { text: string; assignment: Assignment }[] }
  | { kind: 'showVariables'; like: string | undefined; where: string | undefined }
  | {
      kind: 'showColumns';
      full: boolean;
      table: string;
      db: string | undefined;
      like: string | undefined;
      where: string | undefined;
    }
  | { kind: 'showCreateTable'; table: string; db: string | undefined }
  | { kind: 'showCreateDatabase'; db: string; ifNotExists: boolean }
  | { kind: 'showIndex'; table: string; db: string | undefined }
  | { kind: 'showTableStatus'; db: string | undefined; like: string | undefined; where: string | undefined }
  | { kind: 'showWarnings'; errorsOnly: boolean; count: boolean }
  | { kind: 'showProcesslist'; full: boolean }
  | { kind: 'kill'; scope: 'query' | 'connection'; id: number }
  | { kind: 'transaction' }
  | { kind: 'engine'; sql: string };

/** MySQL's functions of the connection, which the engine does not know (or answers as DuckDB). */
export const CONNECTION_FUNCTIONS = [
  'DATABASE',
  'SCHEMA',
  'USER',
  'CURRENT_USER',
  'SESSION_USER',
  'SYSTEM_USER',
  'CONNECTION_ID',
  'VERSION',
  'LAST_INSERT_ID',
  'FOUND_ROWS',
  'ROW_COUNT',
] as const;
export type ConnectionFunction = (typeof CONNECTION_FUNCTIONS)[number];

export const asConnectionFunction = (word: string): ConnectionFunction | undefined =>
  CONNECTION_FUNCTIONS.find((f) => f === word.toUpperCase());

/** Significant tokens with a cursor. */
class Cursor {
  at = 0;
  constructor(
    readonly tokens: Token[],
    readonly sql: string,
  ) {}

  get done() {
    return this.at >= this.tokens.length;
  }
  peek(offset = 0): Token | undefined {
    return this.tokens[this.at + offset];
  }
  isWord(word: string, offset = 0) {
    const t = this.peek(offset);
    return t?.kind === 'word' && t.text.toUpperCase() === word;
  }
  isPunct(p: string, offset = 0) {
    const t = this.peek(offset);
    return t?.kind === 'punct' && t.text === p;
  }
  acceptWord(...words: string[]) {
    const t = this.peek();
    if (t?.kind === 'word' && words.includes(t.text.toUpperCase())) {
      this.at++;
      return t.text.toUpperCase();
    }
    return undefined;
  }
  acceptPunct(p: string) {
    if (!this.isPunct(p)) return false;
    this.at++;
    return true;
  }
  /** A name: a word or a `quoted` identifier. */
  name(): string | undefined {
    const t = this.peek();
    if (t?.kind === 'word' || t?.kind === 'quoted') {
      this.at++;
      return unquoteIdentifier(t);
    }
    return undefined;
  }
  string(): string | undefined {
    const t = this.peek();
    if (t?.kind !== 'string') return undefined;
    this.at++;
    return unquoteString(t.text);
  }
  /** The source text from the current token to the end. */
  rest() {
    const t = this.peek();
    return t ? this.sql.slice(t.start).trim() : '';
  }
}

/** `name` or `db.name`. */
const qualifiedName = (c: Cursor): { db: string | undefined; name: string } | undefined => {
  const first = c.name();
  if (first === undefined) return undefined;
  if (c.acceptPunct('.')) {
    const second = c.name();
    return second === undefined ? undefined : { db: first, name: second };
  }
  return { db: undefined, name: first };
};

/** `LIKE 'pattern'` or `WHERE expr` (the text), or nothing; undefined when anything else follows. */
const filter = (c: Cursor): { like?: string; where?: string } | undefined => {
  if (c.done) return {};
  if (c.acceptWord('LIKE')) {
    const like = c.string();
    return like !== undefined && c.done ? { like } : undefined;
  }
  if (c.acceptWord('WHERE')) {
    const where = c.rest();
    return where ? { where } : undefined;
  }
  return undefined;
};

const connectionSelect = (c: Cursor): Statement | undefined => {
  const items: SelectItem[] = [];
  for (;;) {
    const first = c.peek();
    if (!first) return undefined;
    let expression: ConnectionExpression | undefined;
    if (first.kind === 'systemVariable') {
      expression = { kind: 'variable', name: first.text };
      c.at++;
    } else if (first.kind === 'number') {
      expression = { kind: 'literal', value: Number(first.text) };
      c.at++;
    } else if (first.kind === 'string') {
      expression = { kind: 'literal', value: unquoteString(first.text) };
      c.at++;
    } else if (first.kind === 'word' && first.text.toUpperCase() === 'NULL') {
      expression = { kind: 'literal', value: null };
      c.at++;
    } else if (first.kind === 'word') {
      const fn = asConnectionFunction(first.text);
      if (fn && c.isPunct('(', 1) && c.isPunct(')', 2)) {
        c.at += 3;
        expression = { kind: 'function', name: fn };
      } else if ((fn === 'CURRENT_USER' || fn === 'SESSION_USER') && !c.isPunct('(', 1)) {
        c.at++;
        expression = { kind: 'function', name: fn };
      }
    }
    if (!expression) return undefined;
    const last = c.tokens[c.at - 1]!;
    let name = c.sql.slice(first.start, last.end);
    if (first.kind === 'string') name = unquoteString(first.text);
    if (c.acceptWord('AS')) {
      const alias = c.name() ?? c.string();
      if (alias === undefined) return undefined;
      name = alias;
    } else if (c.peek()?.kind === 'quoted' || c.peek()?.kind === 'string') {
      name = c.name() ?? c.string()!;
    } else if (c.peek()?.kind === 'word' && !c.isWord('LIMIT') && !c.isWord('FROM')) {
      name = c.name()!;
    }
    items.push({ expression, name });
    if (!c.acceptPunct(',')) break;
  }
  // A SELECT of literals only is the engine's (SELECT 1 is how tools check a connection).
  if (items.every((i) => i.expression.kind === 'literal')) return undefined;
  if (c.acceptWord('FROM') && !c.acceptWord('DUAL')) return undefined;
  let noRows = false;
  if (c.acceptWord('LIMIT')) {
    const n = c.peek();
    if (n?.kind !== 'number') return undefined;
    c.at++;
    noRows = Number(n.text) === 0;
  }
  return c.done ? { kind: 'connectionSelect', items, noRows } : undefined;
};

/** One `SET` assignment's text, classified. */
const assignmentOf = (text: string): Assignment => {
  const c = new Cursor(tokenize(text).filter(isSignificant), text);
  if (c.acceptWord('NAMES')) {
    const charset = c.name() ?? c.string();
    if (charset === undefined) return { kind: 'other' };
    const collation = c.acceptWord('COLLATE') ? (c.name() ?? c.string()) : undefined;
    return { kind: 'names', charset, collation };
  }
  if (c.acceptWord('CHARACTER')) {
    if (!c.acceptWord('SET')) return { kind: 'other' };
    const charset = c.name() ?? c.string();
    return charset === undefined ? { kind: 'other' } : { kind: 'names', charset, collation: undefined };
  }
  if (c.acceptWord('CHARSET')) {
    const charset = c.name() ?? c.string();
    return charset === undefined ? { kind: 'other' } : { kind: 'names', charset, collation: undefined };
  }
  const scope = c.acceptWord('GLOBAL', 'SESSION', 'LOCAL', 'PERSIST', 'PERSIST_ONLY');
  const t = c.peek();
  let target: Extract<Assignment, { kind: 'system' | 'user' }> | undefined;
  if (t?.kind === 'userVariable' && !scope) {
    c.at++;
    const raw = t.text.slice(1);
    target = { kind: 'user', name: /^[`'"]/.test(raw) ? unquoteString(raw) : raw, valueText: '' };
  } else if (t?.kind === 'systemVariable') {
    c.at++;
    target = { kind: 'system', name: t.text, valueText: '' };
  } else if (t?.kind === 'word' || t?.kind === 'quoted') {
    if (t.kind === 'word' && t.text.toUpperCase() === 'TRANSACTION') return { kind: 'other' };
    c.at++;
    let name = unquoteIdentifier(t);
    if (c.acceptPunct('.')) name = `${name}.${c.name() ?? ''}`;
    target = { kind: 'system', name, valueText: '' };
  }
  if (!target || !(c.acceptPunct('=') || c.acceptPunct(':='))) return { kind: 'other' };
  const valueText = c.rest();
  return valueText ? { ...target, valueText } : { kind: 'other' };
};

/** The assignments of `SET a = 1, b = (SELECT 2, 3)`: split at commas outside parentheses. */
const setStatement = (sql: string, tokens: Token[]): Statement => {
  const significant = tokens.filter(isSignificant);
  const pieces: string[] = [];
  let depth = 0;
  let from = significant[1]?.start ?? sql.length;
  for (const t of significant.slice(1)) {
    if (t.kind !== 'punct') continue;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (t.text === ',' && depth === 0) {
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

const show = (c: Cursor): Statement | undefined => {
  const full = c.acceptWord('FULL') !== undefined;
  const scope = c.acceptWord('GLOBAL', 'SESSION', 'LOCAL');
  if (c.acceptWord('VARIABLES')) {
    if (full) return undefined;
    const f = filter(c);
    return f ? { kind: 'showVariables', like: f.like, where: f.where } : undefined;
  }
  if (scope) return undefined;
  if (c.acceptWord('COLUMNS', 'FIELDS')) {
    if (!c.acceptWord('FROM', 'IN')) return undefined;
    const table = qualifiedName(c);
    if (!table) return undefined;
    const db = c.acceptWord('FROM', 'IN') ? c.name() : table.db;
    const f = filter(c);
    return f ? { kind: 'showColumns', full, table: table.name, db, like: f.like, where: f.where } : undefined;
  }
  if (full && c.acceptWord('PROCESSLIST'))
    return c.done ? { kind: 'showProcesslist', full: true } : undefined;
  if (full) return undefined;
  if (c.acceptWord('PROCESSLIST')) return c.done ? { kind: 'showProcesslist', full: false } : undefined;
  if (c.acceptWord('CREATE')) {
    if (c.acceptWord('TABLE', 'VIEW')) {
      const table = qualifiedName(c);
      return table && c.done ? { kind: 'showCreateTable', table: table.name, db: table.db } : undefined;
    }
    if (c.acceptWord('DATABASE', 'SCHEMA')) {
      const ifNotExists = c.isWord('IF') && c.isWord('NOT', 1) && c.isWord('EXISTS', 2);
      if (ifNotExists) c.at += 3;
      const db = c.name();
      return db !== undefined && c.done ? { kind: 'showCreateDatabase', db, ifNotExists } : undefined;
    }
    return undefined;
  }
  if (c.acceptWord('INDEX', 'INDEXES', 'KEYS')) {
    if (!c.acceptWord('FROM', 'IN')) return undefined;
    const table = qualifiedName(c);
    if (!table) return undefined;
    const db = c.acceptWord('FROM', 'IN') ? c.name() : table.db;
    return filter(c) ? { kind: 'showIndex', table: table.name, db } : undefined;
  }
  if (c.acceptWord('TABLE')) {
    if (!c.acceptWord('STATUS')) return undefined;
    const db = c.acceptWord('FROM', 'IN') ? c.name() : undefined;
    const f = filter(c);
    return f ? { kind: 'showTableStatus', db, like: f.like, where: f.where } : undefined;
  }
  if (c.acceptWord('COUNT')) {
    if (!(c.acceptPunct('(') && c.acceptPunct('*') && c.acceptPunct(')'))) return undefined;
    const what = c.acceptWord('WARNINGS', 'ERRORS');
    return what && c.done ? { kind: 'showWarnings', errorsOnly: what === 'ERRORS', count: true } : undefined;
  }
  const what = c.acceptWord('WARNINGS', 'ERRORS');
  if (what) {
    // SHOW WARNINGS LIMIT n: the list is short; the limit changes nothing worth its code.
    return { kind: 'showWarnings', errorsOnly: what === 'ERRORS', count: false };
  }
  return undefined;
};

const kill = (c: Cursor): Statement | undefined => {
  const scope = c.acceptWord('QUERY', 'CONNECTION');
  const n = c.peek();
  if (n?.kind !== 'number' || !/^\d+$/.test(n.text)) return undefined;
  c.at++;
  return c.done
    ? { kind: 'kill', scope: scope === 'QUERY' ? 'query' : 'connection', id: Number(n.text) }
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

const CONNECTION_WORDS = new RegExp(`@@|\\b(${CONNECTION_FUNCTIONS.join('|')})\\b`, 'i');

/** Whether a text may read a value of the connection (`@@x`, DATABASE(), …): it must then be tokenized. */
export const mayReadConnection = (sql: string) => CONNECTION_WORDS.test(sql);

/**
 * Sorts one statement: what the connection answers itself, and everything else for the engine.
 * Unrecognised shapes of SHOW, SELECT or SET go to the engine unchanged, which answers or refuses
 * them as it does over HTTP.
 */
export const classify = (sql: string): Statement => {
  // Most statements are the engine's: a glance at the first word and the text decides without tokens.
  const first = /^[\s(]*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
  if (first === 'SELECT' ? !mayReadConnection(sql) : first !== undefined && !LOCAL_KEYWORDS.has(first))
    return { kind: 'engine', sql };
  const tokens = tokenize(sql);
  const c = new Cursor(tokens.filter(isSignificant), sql);
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
