import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  INTEGER,
  LIST,
  listValue,
  SQLNULL,
  VARCHAR,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { SqlError, SqlErrorCode } from '../errors';
import { isKeyword, significant, textOf, tokenize, type Token } from '../../shared/sqlTokens';

type Bindings = Record<string, DuckDBValue>;
type BindingTypes = Record<string, DuckDBType>;

/**
 * Binds `:name`/`@name` placeholders. A list is ONE DuckDB LIST value, whatever its length, and
 * `IN :ids` (or `IN (:ids)`) reads it as `IN (SELECT unnest($ids))`: the same SQL semantics as
 * `IN (v0, v1, …)` with NULLs (a NULL item makes a non-match NULL), and an empty list matches
 * nothing (NOT IN matches everything). One placeholder per item, each found by a regex over the
 * whole text, took 22 s of the event loop for 40,000 items.
 *
 * At most `maxParams` distinct placeholders (SQL_MAX_PARAMS), counted before anything is bound, with
 * the `positional` ones (`?`, `$1`) the client's text holds: nothing binds those, so a text with any
 * is refused here rather than after DuckDB parsed it (50,000 `?`: 3 s, and an error naming each).
 */
export const bindParameters = (
  sql: string,
  placeholders: string[],
  params: Record<string, unknown>,
  maxListItems: number,
  counted: { maxParams?: number; positional?: number } = {},
) => {
  const { maxParams = Number.POSITIVE_INFINITY, positional = 0 } = counted;
  const values: Bindings = {};
  const types: BindingTypes = {};
  const lists = new Set<string>();
  let items = 0;
  const names = new Set(placeholders);
  if (names.size + positional > maxParams)
    throw tooManyParameters(`uses ${names.size + positional} parameters`, maxParams);
  if (positional > 0)
    throw new SqlError(
      SqlErrorCode.MissingParameter,
      `The statement has ${positional} positional placeholders (? or $1), which nothing binds here: name them (:name) and pass their values in "params"`,
    );
  for (const name of names) {
    if (!(name in params))
      throw new SqlError(
        SqlErrorCode.MissingParameter,
        `Parameter is not set: ${name} (pass it in "params")`,
      );
    const value = params[name];
    if (Array.isArray(value)) {
      items += value.length;
      if (items > maxListItems)
        throw new SqlError(
          SqlErrorCode.TooLarge,
          `List parameters hold more than ${maxListItems} values in all (SQL_MAX_LIST_PARAM); ${name} has ${value.length}`,
        );
      const list = toListBinding(name, value);
      values[name] = list.value;
      types[name] = list.type;
      lists.add(name);
    } else {
      const binding = toBinding(name, value);
      values[name] = binding.value;
      if (binding.type) types[name] = binding.type;
    }
  }
  return { sql: lists.size > 0 ? listsAsSubqueries(sql, lists) : sql, values, types };
};

/** The statement names (or is sent) more parameters than SQL_MAX_PARAMS allows. */
export const tooManyParameters = (what: string, maxParams: number) =>
  new SqlError(
    SqlErrorCode.TooLarge,
    `The statement ${what}; SQL_MAX_PARAMS allows ${maxParams} parameters per statement`,
  );

const INT128 = { min: -(2n ** 127n), max: 2n ** 127n - 1n };
const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const isInt32 = (v: number) => v >= -2_147_483_648 && v <= 2_147_483_647;

/**
 * An integral number is bound as the integer its literal would be: INTEGER within 32 bits, BIGINT
 * within 64, HUGEINT past that (DuckDB types an untyped JavaScript bigint as HUGEINT, which
 * functions taking INTEGER or BIGINT arguments refuse: `substr(s, :p, 2)` failed where
 * `substr(s, 2, 2)` answered). Any other number is DOUBLE (NaN and the infinities included, as
 * PostgreSQL's float8 has them). An integer past HUGEINT (JSON's 1e308) is the client's to correct:
 * DuckDB's conversion would fail as an internal error.
 */
const toBinding = (name: string, v: unknown): { value: DuckDBValue; type?: DuckDBType } => {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return { value: v };
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) return { value: v };
    if (isInt32(v)) return { value: v, type: INTEGER };
    const integer = BigInt(v);
    if (integer >= INT64.min && integer <= INT64.max) return { value: integer, type: BIGINT };
    if (integer < INT128.min || integer > INT128.max)
      throw new SqlError(
        SqlErrorCode.Invalid,
        `Parameter ${name} is ${v}, an integer past HUGEINT's range (-2^127 to 2^127-1): send it as a string and cast it in the query (CAST(:${name} AS DOUBLE))`,
      );
    return { value: integer };
  }
  throw new SqlError(
    SqlErrorCode.Invalid,
    `Parameter ${name} must be a string, number, boolean, null or a list of those`,
  );
};

/**
 * A list's DuckDB type follows its items: BOOLEAN, INTEGER (BIGINT past 32 bits: DuckDB's JSON
 * shows nested BIGINTs as strings), DOUBLE or VARCHAR (mixed); all NULL or empty: NULL.
 */
const toListBinding = (name: string, items: unknown[]): { value: DuckDBValue; type: DuckDBType } => {
  type Kind = 'null' | 'boolean' | 'integer' | 'bigint' | 'double' | 'string' | 'mixed';
  const kindOf = (v: unknown): Kind => {
    if (typeof v === 'boolean') return 'boolean';
    if (typeof v === 'string') return 'string';
    if (typeof v === 'number') {
      if (!Number.isInteger(v)) return 'double';
      if (isInt32(v)) return 'integer';
      return BigInt(v) >= INT64.min && BigInt(v) <= INT64.max ? 'bigint' : 'double';
    }
    throw new SqlError(
      SqlErrorCode.Invalid,
      `Parameter ${name} must be a string, number, boolean, null or a list of those`,
    );
  };
  const numeric: Kind[] = ['integer', 'bigint', 'double'];
  let kind: Kind = 'null';
  for (const v of items) {
    if (v === null) continue;
    const k = kindOf(v);
    if (kind === 'null' || kind === k) kind = k;
    else if (numeric.includes(kind) && numeric.includes(k))
      kind = numeric[Math.max(numeric.indexOf(kind), numeric.indexOf(k))]!;
    else kind = 'mixed';
  }
  const convert: Record<Kind, [DuckDBType, (v: unknown) => DuckDBValue]> = {
    null: [SQLNULL, () => null],
    boolean: [BOOLEAN, (v) => v as boolean],
    integer: [INTEGER, (v) => v as number],
    bigint: [BIGINT, (v) => BigInt(v as number)],
    double: [DOUBLE, (v) => v as number],
    string: [VARCHAR, (v) => v as string],
    mixed: [VARCHAR, (v) => String(v)],
  };
  const [type, of] = convert[kind];
  return { value: listValue(items.map((v) => (v === null ? null : of(v)))), type: LIST(type) };
};

/**
 * `IN $ids` and `IN ($ids)` become `IN (SELECT unnest($ids))` for list parameters, in one pass
 * over the text (string literals and quoted identifiers skipped); elsewhere `$ids` is the list.
 */
const listsAsSubqueries = (sql: string, lists: Set<string>) => {
  const tokens = significant(tokenize(sql, 'duckdb'));
  const parts: string[] = [];
  let copied = 0;
  const isSymbol = (t: Token | undefined, c: string) => t?.kind === 'symbol' && sql[t.start] === c;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind !== 'placeholder' || !lists.has(sql.slice(t.start + 1, t.end))) continue;
    const subquery = `(SELECT unnest(${textOf(sql, t)}))`;
    const previous = tokens[k - 1];
    if (isKeyword(sql, previous, 'IN')) {
      parts.push(sql.slice(copied, t.start), subquery);
      copied = t.end;
    } else if (
      isSymbol(previous, '(') &&
      isKeyword(sql, tokens[k - 2], 'IN') &&
      isSymbol(tokens[k + 1], ')')
    ) {
      parts.push(sql.slice(copied, previous!.start), subquery);
      copied = tokens[k + 1]!.end;
    }
  }
  parts.push(sql.slice(copied));
  return parts.join('');
};
