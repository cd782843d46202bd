import { quoteIdent, quoteMysqlIdent, quoteString } from '../shared/quoting';
import { textOf, tokenize, unquoted } from '../shared/sqlTokens';
import { timestampText } from '../shared/time';

/**
 * How SQL is written for one external database's engine: identifiers, typed literals and
 * placeholders. Everything we send a customer's database is built from these (or passed through
 * byte for byte, for a native query): no driver rewrites text by pattern.
 */
export type SqlDialect = {
  readonly name: 'postgres' | 'mysql';
  /** An identifier, quoted. */
  quote(identifier: string): string;
  /** A value as a literal of this dialect, read back as exactly that value whatever the server's settings. */
  literal(value: unknown): string;
  /** The n-th (1-based) placeholder a statement with parameters writes: `$n` or `?`. */
  placeholder(n: number): string;
  /**
   * An expression's value compared byte by byte, as DuckDB compares text: PostgreSQL's collation
   * (`en_US`, ICU) orders `'apple'` before `'B'`, MySQL's `_ci` collations find `'Paris' = 'paris'`
   * and `'a ' = 'a'`; DuckDB finds neither.
   */
  bytewise(expression: string): string;
};

/** A number as the digits it was written with (`-12.50`), kept exact rather than read as a double. */
export class Digits {
  constructor(readonly text: string) {
    if (!/^-?\d+(\.\d+)?$/.test(text)) throw new Error(`Not a number: ${text}`);
  }
}

const hex = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

/** What a value is, for a literal: its kind and text. */
const classify = (
  value: unknown,
):
  | { kind: 'null' }
  | { kind: 'number'; text: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'string'; text: string } => {
  if (value === null || value === undefined) return { kind: 'null' };
  if (typeof value === 'bigint') return { kind: 'number', text: value.toString() };
  if (value instanceof Digits) return { kind: 'number', text: value.text };
  if (typeof value === 'number') {
    // NaN and infinities have no literal in MySQL; PostgreSQL reads them as quoted text.
    return Number.isFinite(value)
      ? { kind: 'number', text: String(value) }
      : { kind: 'string', text: String(value) };
  }
  if (typeof value === 'boolean') return { kind: 'boolean', value };
  if (value instanceof Uint8Array) return { kind: 'bytes', bytes: value };
  if (value instanceof Date) return { kind: 'string', text: timestampText(value) };
  if (typeof value === 'object') {
    // DuckDB's value classes print themselves as DuckDB does; plain objects and arrays as JSON.
    const proto = Object.getPrototypeOf(value) as object | null;
    const own = proto !== Object.prototype && proto !== Array.prototype && proto !== null;
    return { kind: 'string', text: own ? String(value) : JSON.stringify(value) };
  }
  return { kind: 'string', text: String(value as string) };
};

/** A literal whose text and bytes are written the dialect's way; NULL, numbers and booleans alike in both. */
const literalWith =
  (write: { text: (text: string) => string; bytes: (bytes: Uint8Array) => string }) =>
  (value: unknown): string => {
    const v = classify(value);
    switch (v.kind) {
      case 'null':
        return 'NULL';
      case 'number':
        // In parentheses, a negative number cannot meet a minus before it as a `--` comment.
        return v.text.startsWith('-') ? `(${v.text})` : v.text;
      case 'boolean':
        return v.value ? 'TRUE' : 'FALSE';
      case 'bytes':
        return write.bytes(v.bytes);
      case 'string':
        return write.text(v.text);
    }
  };

/**
 * PostgreSQL: `'…'` with quotes doubled is exact while standard_conforming_strings is on, which the
 * driver sets on every connection it opens (src/integrations/drivers.ts). Bytes as `'\x…'::bytea`.
 */
const postgresLiteral = literalWith({ text: quoteString, bytes: (bytes) => `'\\x${hex(bytes)}'::bytea` });

/**
 * MySQL and MariaDB read backslashes in `'…'` as escapes unless the server's sql_mode has
 * NO_BACKSLASH_ESCAPES, so a text holding one (or a NUL) is written as hexadecimal bytes under the
 * utf8mb4 introducer, which reads the same in either mode; any other text as `'…'`, quotes doubled.
 */
const mysqlLiteral = literalWith({
  text: (text) =>
    /[\\\0]/.test(text) ? `_utf8mb4 X'${Buffer.from(text, 'utf8').toString('hex')}'` : quoteString(text),
  bytes: (bytes) => `X'${hex(bytes)}'`,
});

export const POSTGRES_DIALECT: SqlDialect = {
  name: 'postgres',
  quote: quoteIdent,
  literal: postgresLiteral,
  placeholder: (n) => `$${n}`,
  bytewise: (expression) => `CAST(${expression} AS text) COLLATE "C"`,
};

export const MYSQL_DIALECT: SqlDialect = {
  name: 'mysql',
  quote: quoteMysqlIdent,
  literal: mysqlLiteral,
  placeholder: () => '?',
  bytewise: (expression) => `CAST(${expression} AS BINARY)`,
};

/**
 * A MySQL statement with its `?` placeholders (found by the tokenizer: never inside strings,
 * quoted names or comments) replaced by the parameters as literals, in order. mysql2's own
 * formatting replaces every `?` of the text, inside string literals too, so it is never used.
 */
export const bindMysql = (sql: string, params: readonly unknown[]): string => {
  if (params.length === 0) return sql;
  const parts: string[] = [];
  let copied = 0;
  let used = 0;
  for (const t of tokenize(sql, 'mysql-client')) {
    if (t.kind !== 'placeholder' || sql[t.start] !== '?') continue;
    if (used === params.length)
      throw new Error(`The statement has more placeholders than its ${params.length} parameters`);
    parts.push(sql.slice(copied, t.start), mysqlLiteral(params[used++]));
    copied = t.end;
  }
  if (used !== params.length)
    throw new Error(`The statement has ${used} placeholders for ${params.length} parameters`);
  parts.push(sql.slice(copied));
  return parts.join('');
};

/**
 * The operators of a DuckDB text that MySQL and MariaDB read otherwise, without an error: `||`
 * joins strings here (and in MindsDB) and is OR there (`'a' || 'b'` answered 0); `^` is a power
 * here and a bitwise XOR there (`2 ^ 3`: 8 against 1). Each with what to write instead. A query
 * sent to such a database whole that holds one is refused rather than answered otherwise; so is a
 * write's text (MindsDB's MySQL dialect, where `||` joins strings too: its renderer sends concat()).
 */
export const operatorsMysqlReadsOtherwise = (sql: string, textDialect: 'duckdb' | 'mysql'): string[] => {
  const tokens = tokenize(sql, textDialect);
  const found = new Set<string>();
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind !== 'symbol') continue;
    if (sql[t.start] === '^') found.add('`^` (a power here, a bitwise XOR there: write power(a, b))');
    const next = tokens[k + 1];
    if (sql[t.start] === '|' && next?.kind === 'symbol' && next.start === t.end && sql[next.start] === '|') {
      found.add('`||` (it joins strings here, it is OR there: write concat(a, b), or OR)');
      k++;
    }
  }
  return [...found];
};

/**
 * DuckDB's text (what a pushed-down query is planned in) for MySQL and MariaDB: "identifiers"
 * become `identifiers`, and every string literal is written again as a MySQL literal of the same
 * value (DuckDB reads `'a\b'` as three characters; MySQL, by default, as two).
 */
export const duckDbTextForMysql = (sql: string) =>
  tokenize(sql, 'duckdb')
    .map((t) =>
      t.kind === 'identifier'
        ? quoteMysqlIdent(unquoted(sql, t))
        : t.kind === 'string'
          ? mysqlLiteral(unquoted(sql, t))
          : textOf(sql, t),
    )
    .join('');
