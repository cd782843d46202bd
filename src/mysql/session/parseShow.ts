import { userVariableName } from './clientText';
import type { Cursor } from './cursor';
import type { Statement } from './statement';

/** `name` or `db.name`. */
const qualifiedName = (c: Cursor): { db: string | undefined; name: string } | undefined => {
  const first = c.name();
  if (first === undefined) return undefined;
  if (c.acceptSymbol('.')) {
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

/** `[FOR CURRENT_USER[()] | FOR 'user'[@'host']]` after SHOW GRANTS. */
const grants = (c: Cursor): Statement | undefined => {
  if (c.done) return { kind: 'showGrants', account: undefined };
  if (!c.acceptWord('FOR')) return undefined;
  if (c.acceptWord('CURRENT_USER')) {
    if (c.acceptSymbol('(') && !c.acceptSymbol(')')) return undefined;
    return c.done ? { kind: 'showGrants', account: undefined } : undefined;
  }
  const user = c.string() ?? c.name();
  if (user === undefined) return undefined;
  // `'user'@'host'` reads as a name and a user variable (`@'host'`).
  const at = c.peek();
  let host = '%';
  if (at?.kind === 'userVariable') {
    host = userVariableName(c.sql, at);
    c.at++;
  }
  return c.done ? { kind: 'showGrants', account: { user, host } } : undefined;
};

/** The SHOW statements the connection answers, after their SHOW; undefined for the engine's (SHOW TABLES …). */
export const show = (c: Cursor): Statement | undefined => {
  const full = c.acceptWord('FULL') !== undefined;
  const scope = c.acceptWord('GLOBAL', 'SESSION', 'LOCAL');
  if (c.acceptWord('VARIABLES')) {
    if (full) return undefined;
    const f = filter(c);
    return f ? { kind: 'showVariables', like: f.like, where: f.where } : undefined;
  }
  if (scope) return undefined;
  if (!full && c.acceptWord('COLLATION')) {
    const f = filter(c);
    return f ? { kind: 'showCollation', like: f.like, where: f.where } : undefined;
  }
  const characterSet = !full && c.isWord('CHARACTER') && c.isWord('SET', 1);
  if (characterSet) c.at += 2;
  if (characterSet || (!full && c.acceptWord('CHARSET'))) {
    const f = filter(c);
    return f ? { kind: 'showCharset', like: f.like, where: f.where } : undefined;
  }
  if (!full && c.acceptWord('PLUGINS')) return c.done ? { kind: 'showPlugins' } : undefined;
  if (!full && c.acceptWord('GRANTS')) return grants(c);
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
    if (!(c.acceptSymbol('(') && c.acceptSymbol('*') && c.acceptSymbol(')'))) return undefined;
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
