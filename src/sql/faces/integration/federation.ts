import { DuckDBListValue, type DuckDBConnection } from '@duckdb/node-api';
import {
  cutText,
  FETCH_LIMIT,
  type ExternalDatabase,
  type ExternalResult,
} from '../../../integrations/drivers';
import { Digits, operatorsMysqlReadsOtherwise, type SqlDialect } from '../../../integrations/dialects';
import {
  conjunctsOf,
  decimalDigitsOf,
  requiredNodeAt,
  serializedConstantOf,
  stringsAt,
  type AstNode,
} from '../../pipeline/ast';
import { SqlError, SqlErrorCode } from '../../errors';
import { quoteIdent } from '../../../shared/quoting';
import {
  isKeyword,
  nativeQuerySpans,
  significant,
  textOf,
  tokenize,
  unquoted,
  type Token,
} from '../../../shared/sqlTokens';
import { timestampText } from '../../../shared/time';

/** A table of an external database that a mixed query needs locally, and how to fetch it. */
export type ExternalFetch = {
  temp: string;
  integration: string;
  /** In the external database's own dialect: a native query as written, or built with the dialect's quoting and literals. */
  sql: string | ((db: Pick<ExternalDatabase, 'dialect' | 'qualify'>) => string);
  /** Read through the driver instead of a query (the database's column listing). */
  read?: (db: ExternalDatabase) => Promise<ExternalResult>;
  /** What a database that cannot be reached gives instead of failing the query (listings only). */
  unreachable?: ExternalResult;
};

/**
 * `SELECT * FROM pg_db (SELECT … in pg's own SQL)`: MindsDB's native-query syntax. Each such
 * subquery is cut out (balanced parentheses, quotes respected) and replaced by a placeholder table.
 */
export const extractNativeQueries = async (
  sql: string,
  isIntegration: (name: string) => Promise<string | undefined>,
): Promise<{ sql: string; natives: Map<string, { integration: string; sql: string }> }> => {
  const natives = new Map<string, { integration: string; sql: string }>();
  // Most queries have no `name (` after FROM or JOIN at all.
  if (!/\b(FROM|JOIN)\s+[`"A-Za-z_][^(]*?\(/i.test(sql)) return { sql, natives };
  // One lookup per distinct name: a long text may say FROM x ( many times.
  const known = new Map<string, Promise<string | undefined>>();
  const integrationOf = (name: string) => {
    let found = known.get(name.toLowerCase());
    if (!found) known.set(name.toLowerCase(), (found = isIntegration(name)));
    return found;
  };
  const tokens = significant(tokenize(sql, 'mysql'));
  let out = '';
  let last = 0;
  for (const span of nativeQuerySpans(sql, tokens)) {
    const integration = await integrationOf(span.name);
    if (!integration) continue;
    if (span.close < 0)
      throw new SqlError(SqlErrorCode.Syntax, 'Unbalanced parentheses around the native query');
    const [keyword, open, close] = [tokens[span.keyword]!, tokens[span.open]!, tokens[span.close]!];
    const placeholder = `__native_${natives.size}`;
    // The text between the parentheses, as the client wrote it (blanks at its ends aside).
    natives.set(placeholder, { integration, sql: sql.slice(open.end, close.start).trim() });
    out += `${sql.slice(last, keyword.start)}${textOf(sql, keyword)} ${placeholder}`;
    last = close.end;
  }
  return { sql: out + sql.slice(last), natives };
};

/**
 * Removes `<integration>.` qualifiers (outside strings) so the query reads in the database's own
 * terms: a name (not itself after a dot or another name) followed by a dot.
 */
export const stripQualifier = (sql: string, integration: string) => {
  const key = integration.toLowerCase();
  const tokens = tokenize(sql, 'duckdb');
  const isDot = (t: Token | undefined) => t?.kind === 'symbol' && sql[t.start] === '.';
  const parts: string[] = [];
  let copied = 0;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    const name =
      t.kind === 'identifier'
        ? unquoted(sql, t)
        : t.kind === 'word' && /^[A-Za-z_]/.test(sql[t.start]!)
          ? textOf(sql, t)
          : null;
    if (name === null || name.toLowerCase() !== key) continue;
    const before = tokens[k - 1];
    if (
      before &&
      (before.kind === 'word' || before.kind === 'identifier' || isDot(before) || sql[before.end - 1] === '"')
    )
      continue;
    let j = k + 1;
    if (tokens[j]?.kind === 'blank') j++;
    if (!isDot(tokens[j])) continue;
    j++;
    if (tokens[j]?.kind === 'blank') j++;
    parts.push(sql.slice(copied, t.start));
    copied = tokens[j]?.start ?? sql.length;
  }
  parts.push(sql.slice(copied));
  return parts.join('');
};

/**
 * A text for MySQL or MariaDB holding operators it would read otherwise (`||`, `^`) is refused,
 * naming them: `sent` says what goes where ("The query is sent whole to crm (mariadb)").
 */
export const refuseOperatorsReadOtherwise = (text: string, textDialect: 'duckdb' | 'mysql', sent: string) => {
  const operators = operatorsMysqlReadsOtherwise(text, textDialect);
  if (operators.length > 0)
    throw new SqlError(SqlErrorCode.Invalid, `${sent}, which reads ${operators.join(' and ')} otherwise`);
};

/**
 * `$name` placeholders (DuckDB's) become the external database's own (`$1…` or `?`) in order,
 * with their values. A list parameter, which DuckDB reads as `(SELECT unnest($name))`, goes to the
 * external database as a list of placeholders.
 */
export const positional = (sql: string, values: Record<string, unknown>, dialect: SqlDialect) => {
  const ordered: unknown[] = [];
  const next = (v: unknown) => {
    ordered.push(v);
    return dialect.placeholder(ordered.length);
  };
  const tokens = tokenize(sql, 'duckdb');
  const meaningful = significant(tokens);
  const parts: string[] = [];
  let copied = 0;
  const symbol = (t: Token | undefined, c: string) => t?.kind === 'symbol' && sql[t.start] === c;
  for (let k = 0; k < meaningful.length; k++) {
    const t = meaningful[k]!;
    if (t.kind !== 'placeholder') continue;
    const v = values[sql.slice(t.start + 1, t.end)];
    // `(SELECT unnest($name))` around it: the list as a whole.
    const wrapped =
      symbol(meaningful[k - 1], '(') &&
      isKeyword(sql, meaningful[k - 2], 'UNNEST') &&
      isKeyword(sql, meaningful[k - 3], 'SELECT') &&
      symbol(meaningful[k - 4], '(') &&
      symbol(meaningful[k + 1], ')') &&
      symbol(meaningful[k + 2], ')');
    const [from, to] = wrapped ? [meaningful[k - 4]!.start, meaningful[k + 2]!.end] : [t.start, t.end];
    const replacement =
      v instanceof DuckDBListValue
        ? `(${v.items.map(next).join(', ') || 'NULL'})`
        : wrapped
          ? `(SELECT unnest(${next(v)}))`
          : next(v);
    parts.push(sql.slice(copied, from), replacement);
    copied = to;
    if (wrapped) k += 2;
  }
  parts.push(sql.slice(copied));
  return { text: parts.join(''), params: ordered };
};

const OPERATORS: Record<string, string> = {
  COMPARE_EQUAL: '=',
  COMPARE_NOTEQUAL: '<>',
  COMPARE_LESSTHAN: '<',
  COMPARE_GREATERTHAN: '>',
  COMPARE_LESSTHANOREQUALTO: '<=',
  COMPARE_GREATERTHANOREQUALTO: '>=',
};

/** A constant's value as a literal can carry it (numbers as their digits), or undefined when none can. */
const constantValue = (node: AstNode): { value: unknown } | undefined => {
  if (node.class !== 'CONSTANT') return undefined;
  const v = serializedConstantOf(node);
  if (v.is_null) return undefined;
  // A DECIMAL by its digits at its scale: read as it stands, `price > 9.99` went as `price > 999`,
  // and the rows between never came over.
  const digits = v.type.id === 'DECIMAL' ? decimalDigitsOf(v) : String(v.value);
  if (
    typeof v.value === 'number' ||
    /^(INTEGER|BIGINT|DOUBLE|DECIMAL|HUGEINT|SMALLINT|TINYINT)$/.test(v.type.id)
  )
    return /^-?\d+(\.\d+)?$/.test(digits) ? { value: new Digits(digits) } : undefined;
  if (typeof v.value === 'boolean' || typeof v.value === 'string') return { value: v.value };
  return undefined;
};

/**
 * The conditions of a WHERE clause that concern only one external table and compare one of its
 * columns with a constant: sent along with the fetch so only matching rows cross the wire. DuckDB
 * still applies the whole WHERE afterwards, so a pushed condition may keep more rows than DuckDB
 * would, never fewer. Equality with text keeps more there (a case-insensitive collation, trailing
 * spaces) or the same; an order or `<>` with text may keep fewer (`city < 'paris'` under MariaDB's
 * `_ci` collation leaves out 'Paris', which DuckDB keeps; `w > 'B'` under an ICU collation leaves
 * out 'apple'), so it goes as "the database's comparison, or the bytes' one" (`bytewise`), one of
 * which is DuckDB's: the database's own for a number or a date, the bytes' for text.
 */
export const pushableFilters = (where: AstNode | null | undefined, alias: string, onlyTable: boolean) => {
  const conjuncts = conjunctsOf(where);
  const filters: ((dialect: SqlDialect) => string)[] = [];
  for (const c of conjuncts) {
    const op = OPERATORS[String(c.type)];
    if (c.class !== 'COMPARISON' || !op) continue;
    let column = requiredNodeAt(c, 'left');
    let value = requiredNodeAt(c, 'right');
    let operator = op;
    if (column.class !== 'COLUMN_REF') {
      [column, value] = [value, column];
      operator = { '<': '>', '>': '<', '<=': '>=', '>=': '<=' }[op] ?? op;
    }
    if (column.class !== 'COLUMN_REF') continue;
    const names = stringsAt(column, 'column_names');
    const belongs =
      names.length === 2 ? names[0]!.toLowerCase() === alias.toLowerCase() : names.length === 1 && onlyTable;
    const constant = constantValue(value);
    if (!belongs || constant === undefined) continue;
    const col = names[names.length - 1]!;
    const byCollation = operator !== '=' && typeof constant.value === 'string';
    filters.push((dialect) => {
      const [name, literal] = [dialect.quote(col), dialect.literal(constant.value)];
      const compared = `${name} ${operator} ${literal}`;
      return byCollation ? `(${compared} OR ${dialect.bytewise(name)} ${operator} ${literal})` : compared;
    });
  }
  return filters;
};

/** The refusal of an external table larger than what one read may bring (src/integrations/drivers.ts). */
const tooLarge = (what: string) =>
  new SqlError(
    SqlErrorCode.Invalid,
    `A joined external table returned more than ${what}; filter it, or run the query in that database alone`,
  );

/**
 * Converts an external result into a DuckDB temporary table on this connection. A result the driver
 * cut (it stopped reading at FETCH_LIMIT rows or FETCH_BYTES of text) is refused: a table missing
 * rows would answer wrongly.
 */
export const loadIntoDuckDb = async (c: DuckDBConnection, temp: string, result: ExternalResult) => {
  if (result.cut) throw tooLarge(cutText(result.cut));
  if (result.rows.length > FETCH_LIMIT) throw tooLarge(`${FETCH_LIMIT} rows`);
  const raw = `${temp}_raw`;
  const columns = result.columns.length ? result.columns : [{ name: 'empty', type: 'VARCHAR' }];
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdent(raw)} (${columns.map((col) => `${quoteIdent(col.name)} VARCHAR`).join(', ')})`,
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
    `CREATE OR REPLACE TEMP TABLE ${quoteIdent(temp)} AS SELECT ${columns
      .map((col) =>
        col.type === 'VARCHAR'
          ? quoteIdent(col.name)
          : `TRY_CAST(${quoteIdent(col.name)} AS ${col.type}) AS ${quoteIdent(col.name)}`,
      )
      .join(', ')} FROM ${quoteIdent(raw)}`,
  );
  await c.run(`DROP TABLE ${quoteIdent(raw)}`);
};

const asText = (v: unknown): string => {
  if (v instanceof Date) return timestampText(v);
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
    truncated: result.cut !== undefined || result.rows.length > rowLimit || cut < converted.length,
  };
};

export type Externals = { get(name: string): Promise<ExternalDatabase> };
