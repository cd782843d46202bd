import { DuckDBListValue, type DuckDBConnection } from '@duckdb/node-api';
import type { ExternalDatabase, ExternalResult } from '../integrations/drivers';
import type { AstNode } from './ast';
import { SqlError, SqlErrorCode } from './errors';

/** A table of an external database that a mixed query needs locally, and how to fetch it. */
export type ExternalFetch = {
  temp: string;
  integration: string;
  /** In the external database's own dialect (built with its quoting), `?` placeholders. */
  sql: string | ((quote: (id: string) => string) => string);
};

/** Rows a mixed query may copy from one external table into DuckDB. */
export const FETCH_LIMIT = 1_000_000;

const q = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * `SELECT * FROM pg_db (SELECT … in pg's own SQL)`: MindsDB's native-query syntax. Each such
 * subquery is cut out (balanced parentheses, quotes respected) and replaced by a placeholder table.
 */
export const extractNativeQueries = async (
  sql: string,
  isIntegration: (name: string) => Promise<string | undefined>,
): Promise<{ sql: string; natives: Map<string, { integration: string; sql: string }> }> => {
  const natives = new Map<string, { integration: string; sql: string }>();
  // One lookup per distinct name: a long text may say FROM x ( many times.
  const known = new Map<string, Promise<string | undefined>>();
  const integrationOf = (name: string) => {
    let found = known.get(name.toLowerCase());
    if (!found) known.set(name.toLowerCase(), (found = isIntegration(name)));
    return found;
  };
  const pattern = /\b(FROM|JOIN)\s+(`[^`]+`|"[^"]+"|[A-Za-z_][A-Za-z0-9_]*)\s*\(/gi;
  let out = '';
  let last = 0;
  for (let m = pattern.exec(sql); m; m = pattern.exec(sql)) {
    if (m.index < last) continue;
    const name = m[2]!.replace(/^[`"]|[`"]$/g, '');
    const integration = await integrationOf(name);
    if (!integration) continue;
    const open = m.index + m[0].length - 1;
    const close = matchingParen(sql, open);
    const placeholder = `__native_${natives.size}`;
    natives.set(placeholder, { integration, sql: sql.slice(open + 1, close).trim() });
    out += `${sql.slice(last, m.index)}${m[1]} ${placeholder}`;
    last = close + 1;
    pattern.lastIndex = last;
  }
  return { sql: out + sql.slice(last), natives };
};

const matchingParen = (sql: string, open: number) => {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < sql.length; i++) {
    const c = sql[i]!;
    if (quote) {
      if (c === quote) quote = sql[i + 1] === quote ? (i++, quote) : null;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  throw new SqlError(SqlErrorCode.Syntax, 'Unbalanced parentheses around the native query');
};

/** Where the DuckDB string literal opening at `open` closes ('' is a quote inside it). */
const closingQuote = (sql: string, open: number) => {
  let j = open + 1;
  while (j < sql.length && !(sql[j] === "'" && sql[j + 1] !== "'")) j += sql[j] === "'" ? 2 : 1;
  return j;
};

/**
 * Removes `<integration>.` qualifiers (outside strings) so the query reads in the database's own
 * terms. Each name is read once (not re-matched from each of its characters).
 */
export const stripQualifier = (sql: string, integration: string) => {
  const key = integration.toLowerCase();
  const parts: string[] = [];
  let copied = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'") {
      i = closingQuote(sql, i) + 1;
      continue;
    }
    const prev = sql[i - 1];
    if ((c === '"' || /[A-Za-z_]/.test(c)) && (prev === undefined || !/[A-Za-z0-9_."]/.test(prev))) {
      let j = i + 1;
      let name: string;
      if (c === '"') {
        while (j < sql.length && !(sql[j] === '"' && sql[j + 1] !== '"')) j += sql[j] === '"' ? 2 : 1;
        if (j >= sql.length) {
          // Not a quoted name after all (no closing quote): an ordinary character.
          i++;
          continue;
        }
        name = sql.slice(i + 1, j).replace(/""/g, '"');
        j++;
      } else {
        while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j]!)) j++;
        name = sql.slice(i, j);
      }
      let k = j;
      while (k < sql.length && /\s/.test(sql[k]!)) k++;
      if (sql[k] === '.' && name.length > 0) {
        k++;
        while (k < sql.length && /\s/.test(sql[k]!)) k++;
        if (name.toLowerCase() === key) {
          parts.push(sql.slice(copied, i));
          copied = k;
        }
        i = k;
      } else i = j;
      continue;
    }
    i++;
  }
  parts.push(sql.slice(copied));
  return parts.join('');
};

/** `"identifier"` → `` `identifier` `` (outside string literals), for MySQL and MariaDB. */
export const doubleQuotesToBackticks = (sql: string) => {
  let out = '';
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'") {
      const j = closingQuote(sql, i);
      out += sql.slice(i, j + 1);
      i = j;
    } else if (c === '"') {
      let j = i + 1;
      let name = '';
      while (j < sql.length && !(sql[j] === '"' && sql[j + 1] !== '"')) {
        name += sql[j] === '"' ? '"' : sql[j];
        j += sql[j] === '"' ? 2 : 1;
      }
      out += `\`${name.replace(/`/g, '``')}\``;
      i = j;
    } else out += c;
  }
  return out;
};

/**
 * `$name` placeholders (DuckDB's) become `?` in order, with their values. A list parameter, which
 * DuckDB reads as `(SELECT unnest($name))`, goes to the external database as `(?, ?, …)`.
 */
export const positional = (sql: string, values: Record<string, unknown>) => {
  const ordered: unknown[] = [];
  const plain = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);
  const text = sql.replace(
    /\(SELECT unnest\(\$([A-Za-z_][A-Za-z0-9_]*)\)\)|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (_match, listName: string | undefined, name: string | undefined) => {
      const v = values[(listName ?? name)!];
      if (v instanceof DuckDBListValue) {
        for (const item of v.items) ordered.push(plain(item));
        return `(${v.items.map(() => '?').join(', ') || 'NULL'})`;
      }
      ordered.push(plain(v));
      return listName ? '(SELECT unnest(?))' : '?';
    },
  );
  return { text, params: ordered };
};

const OPERATORS: Record<string, string> = {
  COMPARE_EQUAL: '=',
  COMPARE_NOTEQUAL: '<>',
  COMPARE_LESSTHAN: '<',
  COMPARE_GREATERTHAN: '>',
  COMPARE_LESSTHANOREQUALTO: '<=',
  COMPARE_GREATERTHANOREQUALTO: '>=',
};

const literal = (node: AstNode): string | null => {
  if (node.class !== 'CONSTANT') return null;
  const v = node.value as { is_null: boolean; value: unknown; type: { id: string } };
  if (v.is_null) return null;
  if (
    typeof v.value === 'number' ||
    /^(INTEGER|BIGINT|DOUBLE|DECIMAL|HUGEINT|SMALLINT|TINYINT)$/.test(v.type.id)
  )
    return /^-?\d+(\.\d+)?$/.test(String(v.value)) ? String(v.value) : null;
  if (typeof v.value === 'boolean') return v.value ? 'TRUE' : 'FALSE';
  if (typeof v.value === 'string') return `'${v.value.replace(/'/g, "''")}'`;
  return null;
};

/**
 * The conditions of a WHERE clause that concern only one external table and compare one of its
 * columns with a constant: sent along with the fetch so only matching rows cross the wire. DuckDB
 * still applies the whole WHERE afterwards, so pushing is only ever an optimisation.
 */
export const pushableFilters = (where: AstNode | null | undefined, alias: string, onlyTable: boolean) => {
  const conjuncts: AstNode[] = [];
  const flatten = (n: AstNode | null | undefined) => {
    if (!n) return;
    if (n.class === 'CONJUNCTION' && n.type === 'CONJUNCTION_AND')
      for (const c of n.children as AstNode[]) flatten(c);
    else conjuncts.push(n);
  };
  flatten(where);
  const filters: ((quote: (id: string) => string) => string)[] = [];
  for (const c of conjuncts) {
    const op = OPERATORS[String(c.type)];
    if (c.class !== 'COMPARISON' || !op) continue;
    let column = c.left as AstNode;
    let value = c.right as AstNode;
    let operator = op;
    if (column.class !== 'COLUMN_REF') {
      [column, value] = [value, column];
      operator = { '<': '>', '>': '<', '<=': '>=', '>=': '<=' }[op] ?? op;
    }
    if (column.class !== 'COLUMN_REF') continue;
    const names = column.column_names as string[];
    const belongs =
      names.length === 2 ? names[0]!.toLowerCase() === alias.toLowerCase() : names.length === 1 && onlyTable;
    const lit = literal(value);
    if (!belongs || lit === null) continue;
    const col = names[names.length - 1]!;
    filters.push((quote) => `${quote(col)} ${operator} ${lit}`);
  }
  return filters;
};

/** Converts an external result into a DuckDB temporary table on this connection. */
export const loadIntoDuckDb = async (c: DuckDBConnection, temp: string, result: ExternalResult) => {
  if (result.rows.length > FETCH_LIMIT)
    throw new SqlError(
      SqlErrorCode.Invalid,
      `A joined external table returned more than ${FETCH_LIMIT} rows; filter it, or run the query in that database alone`,
    );
  const raw = `${temp}_raw`;
  const columns = result.columns.length ? result.columns : [{ name: 'empty', type: 'VARCHAR' }];
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${q(raw)} (${columns.map((col) => `${q(col.name)} VARCHAR`).join(', ')})`,
  );
  const appender = await c.createAppender(raw);
  try {
    for (const row of result.rows) {
      for (let i = 0; i < columns.length; i++) {
        const v = row[i];
        if (v === null || v === undefined) appender.appendNull();
        else appender.appendVarchar(asText(v));
      }
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${q(temp)} AS SELECT ${columns
      .map((col) =>
        col.type === 'VARCHAR' ? q(col.name) : `TRY_CAST(${q(col.name)} AS ${col.type}) AS ${q(col.name)}`,
      )
      .join(', ')} FROM ${q(raw)}`,
  );
  await c.run(`DROP TABLE ${q(raw)}`);
};

const asText = (v: unknown): string => {
  if (v instanceof Date) return v.toISOString().replace('T', ' ').replace('Z', '');
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

/** An external result as a SQL answer, cells as JSON values with the same conventions as DuckDB's. */
export const externalAnswer = (result: ExternalResult, rowLimit: number, maxBytes: number) => {
  const converted = result.rows.slice(0, rowLimit).map((row) =>
    row.map((v, i) => {
      const type = result.columns[i]?.type ?? 'VARCHAR';
      if (v === null || v === undefined) return null;
      if (type === 'BIGINT') {
        const n = Number(v);
        return Number.isSafeInteger(n) ? n : String(v);
      }
      if (type === 'DOUBLE') {
        const n = Number(v);
        return Number.isFinite(n) ? n : null;
      }
      if (type === 'TIMESTAMP') {
        const d =
          v instanceof Date
            ? v
            : new Date(/[+-]\d\d(:?\d\d)?$|Z$/.test(String(v)) ? String(v) : `${String(v)}Z`);
        return Number.isFinite(d.getTime())
          ? `${d.toISOString().replace('T', ' ').slice(0, 23)}000`
          : String(v);
      }
      if (type === 'DATE') return v instanceof Date ? v.toISOString().slice(0, 10) : String(v).slice(0, 10);
      if (Buffer.isBuffer(v)) return v.toString('base64');
      return v;
    }),
  );
  // The same answer-size limit as DuckDB answers (the driver has the rows in memory already).
  let bytes = 0;
  let cut = converted.length;
  for (let i = 0; i < converted.length; i++) {
    bytes += Buffer.byteLength(JSON.stringify(converted[i])) + 1;
    if (bytes > maxBytes) {
      cut = i;
      break;
    }
  }
  return {
    column_names: result.columns.map((c) => c.name),
    column_types: result.columns.map((c) => c.type),
    data: converted.slice(0, cut),
    truncated: result.rows.length > rowLimit || cut < converted.length,
  };
};

export type Externals = { get(name: string): Promise<ExternalDatabase> };
