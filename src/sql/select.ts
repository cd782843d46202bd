import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  INTEGER,
  LIST,
  listValue,
  SQLNULL,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBResult,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { Duck } from '../duckdb/database';
import { parseSelect, printSelect, walk, type AstNode } from './ast';
import type { CatalogResolver } from './catalog';
import { externalError, SqlError, SqlErrorCode } from './errors';
import { readAnswer } from './values';
import { resolveScopes } from './scope';
import { deadlineIn, pause, withinDeadline, type Deadline } from './deadline';
import type { Predictor } from '../ml/predict';
import {
  externalAnswer,
  loadIntoDuckDb,
  doubleQuotesToBackticks,
  positional,
  pushableFilters,
  stripQualifier,
  type ExternalFetch,
  type Externals,
} from './federation';

export type TableAnswer = {
  type: 'table';
  column_names: string[];
  column_types: string[];
  data: unknown[][];
  /** Present (true) when the answer was cut at the row limit. */
  truncated?: true;
};

export type SelectLimits = {
  rowLimit: number;
  timeoutMs: number;
  /** Items all list parameters of one query may hold together. */
  maxListItems: number;
  /** Bytes (as UTF-8 JSON) the rows of an answer may take; past them the answer is cut. */
  maxAnswerBytes: number;
  /** The request's deadline, when it started before this query (else `timeoutMs` from now). */
  deadline?: Deadline;
  signal?: AbortSignal;
};

type Bindings = Record<string, DuckDBValue>;
type BindingTypes = Record<string, DuckDBType>;

/**
 * Binds `:name`/`@name` placeholders. A list is ONE DuckDB LIST value, whatever its length, and
 * `IN :ids` (or `IN (:ids)`) reads it as `IN (SELECT unnest($ids))`: the same SQL semantics as
 * `IN (v0, v1, …)` with NULLs (a NULL item makes a non-match NULL), and an empty list matches
 * nothing (NOT IN matches everything). One placeholder per item, each found by a regex over the
 * whole text, took 22 s of the event loop for 40,000 items.
 */
const bindParameters = (
  sql: string,
  placeholders: string[],
  params: Record<string, unknown>,
  maxListItems: number,
) => {
  const values: Bindings = {};
  const types: BindingTypes = {};
  const lists = new Set<string>();
  let items = 0;
  for (const name of new Set(placeholders)) {
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
    } else values[name] = toBinding(name, value);
  }
  return { sql: lists.size > 0 ? listsAsSubqueries(sql, lists) : sql, values, types };
};

const toBinding = (name: string, v: unknown): DuckDBValue => {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  throw new SqlError(
    SqlErrorCode.Invalid,
    `Parameter ${name} must be a string, number, boolean, null or a list of those`,
  );
};

const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const isInt32 = (v: number) => v >= -2_147_483_648 && v <= 2_147_483_647;

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
  const parts: string[] = [];
  let copied = 0;
  // The last two significant tokens before the current position: words upper-cased, else the character.
  let previous: { text: string; start: number } | null = null;
  let beforePrevious: { text: string; start: number } | null = null;
  const note = (text: string, start: number) => {
    beforePrevious = previous;
    previous = { text, start };
  };
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      note(c, i);
      i = j + 1;
    } else if (c === '$' && /[A-Za-z_]/.test(sql[i + 1] ?? '') && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j]!)) j++;
      const name = sql.slice(i + 1, j);
      if (lists.has(name)) {
        const subquery = `(SELECT unnest($${name}))`;
        let k = j;
        while (k < sql.length && /\s/.test(sql[k]!)) k++;
        const p = previous as { text: string; start: number } | null;
        const pp = beforePrevious as { text: string; start: number } | null;
        if (p?.text === 'IN') {
          parts.push(sql.slice(copied, i), subquery);
          copied = j;
        } else if (p?.text === '(' && pp?.text === 'IN' && sql[k] === ')') {
          parts.push(sql.slice(copied, p.start), subquery);
          copied = k + 1;
          j = k + 1;
        }
      }
      note('$', i);
      i = j;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_$]/.test(sql[j]!)) j++;
      note(sql.slice(i, j).toUpperCase(), i);
      i = j;
    } else {
      if (!/\s/.test(c)) note(c, i);
      i++;
    }
  }
  parts.push(sql.slice(copied));
  return parts.join('');
};

/**
 * MindsDB names an unaliased constant by its value (`select 'a'` → "a") where DuckDB quotes it:
 * the names to use instead, by position (undefined: keep DuckDB's).
 */
const constantColumnNames = (statement: AstNode): (string | undefined)[] | null => {
  const node = statement.node as AstNode | undefined;
  const list = node?.type === 'SELECT_NODE' ? (node.select_list as AstNode[]) : undefined;
  if (!list || list.some((item) => item.class === 'STAR')) return null;
  return list.map((item) => {
    if (item.alias || item.class !== 'CONSTANT') return undefined;
    const value = item.value as { is_null: boolean; value: unknown; type: { id: string } };
    return value.is_null ? 'NULL' : value.type.id === 'VARCHAR' ? String(value.value) : undefined;
  });
};

/**
 * A query after parsing and name resolution. `local`: everything lives in DuckDB. `pushdown`: every
 * table is in one external database, so the whole query goes there and only the answer comes back.
 * `federated`: external tables (filtered where possible) are copied into DuckDB, which runs the rest.
 */
type Prepared =
  | {
      kind: 'local';
      sql: string;
      names: (string | undefined)[] | null;
      /** The answer depends only on the projections (no clock, randomness, sampling). */
      deterministic: boolean;
    }
  | { kind: 'pushdown'; integration: string; sql: string }
  | { kind: 'federated'; sql: string; names: (string | undefined)[] | null; fetches: ExternalFetch[] }
  | {
      /** A model queried as a table: predictions are computed at run time, never cached. */
      kind: 'model';
      statement: AstNode;
      refs: { node: AstNode; project: string; name: string }[];
      names: (string | undefined)[] | null;
    };

/** What the SQL endpoint needs from the models capability. */
export type Predictions = { predictor(project: string, name: string): Promise<Predictor> };

const versionedCache = <T>(maxEntries: number) => {
  let version = -1;
  const entries = new Map<string, T>();
  return {
    get: (v: number, key: string) => (v === version ? entries.get(key) : undefined),
    set: (v: number, key: string, value: T) => {
      if (v !== version) {
        entries.clear();
        version = v;
      }
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(key, value);
    },
  };
};

/**
 * Parsed-and-resolved queries, and the answers of deterministic local ones, for the current
 * projection version: the tables change only when events are applied, so until then the same query
 * over the same tables has the same answer (dashboards and clients that poll get it without DuckDB).
 */
export const preparedCache = () => ({
  queries: versionedCache<Prepared>(1000),
  answers: versionedCache<TableAnswer>(200),
});
export type PreparedCache = ReturnType<typeof preparedCache>;
const MAX_CACHED_ROWS = 1000;
/** Cached answers are small: 200 (and the service's 500) entries of up to SQL_MAX_ANSWER_BYTES each would not be. */
const MAX_CACHED_BYTES = 256 * 1024;

/** Answers that depend only on the projections' version: callers may keep them as long as it holds. */
const reusableAnswers = new WeakSet<TableAnswer>();
export const isReusableAnswer = (answer: TableAnswer) => reusableAnswers.has(answer);

/**
 * DuckDB prepared statements, per pooled connection: a repeated query skips DuckDB's statement
 * extraction and planning, which dominate the cost of small queries. DuckDB rebinds a statement when
 * the catalog changes but not when the data does, and its plan bakes in the statistics it saw (a
 * LIKE over an empty table is planned as "no rows", compressed materialisation truncates strings
 * longer than any seen): so a statement is kept only for the data epoch it was planned in.
 */
type EpochStatement = { epoch: number; statement: DuckDBPreparedStatement };
const statementsByConnection = new WeakMap<DuckDBConnection, Map<string, EpochStatement>>();
const MAX_STATEMENTS_PER_CONNECTION = 200;
const preparedStatement = async (c: DuckDBConnection, sql: string, epoch: number) => {
  let statements = statementsByConnection.get(c);
  if (!statements) statementsByConnection.set(c, (statements = new Map()));
  const cached = statements.get(sql);
  if (cached) {
    statements.delete(sql);
    if (cached.epoch === epoch) {
      statements.set(sql, cached);
      return cached.statement;
    }
    cached.statement.destroySync();
  }
  const statement = await c.prepare(sql);
  statements.set(sql, { epoch, statement });
  if (statements.size > MAX_STATEMENTS_PER_CONNECTION) {
    const [oldestSql, oldest] = statements.entries().next().value as [string, EpochStatement];
    statements.delete(oldestSql);
    oldest.statement.destroySync();
  }
  return statement;
};

/**
 * Runs a deterministic local query, through a reused statement when the data is at rest. The
 * statement's execution is its own transaction: if a batch was written while it was planned or ran,
 * the plan may not fit the data it read, so the query runs again planned and executed together.
 */
const readDeterministic = async <T>(
  c: DuckDBConnection,
  sql: string,
  values: Record<string, DuckDBValue>,
  types: Record<string, DuckDBType>,
  read: (result: DuckDBResult) => Promise<T>,
  dataEpoch: () => number,
): Promise<T> => {
  const epoch = dataEpoch();
  if (epoch % 2 === 0) {
    const statement = await preparedStatement(c, sql, epoch);
    statement.clearBindings();
    if (Object.keys(values).length > 0) statement.bind(values, types);
    const answer = await read(await statement.stream());
    if (dataEpoch() === epoch) return answer;
  }
  return read(await c.stream(sql, values, types));
};

type ExternalRef = {
  node: AstNode;
  integration: string;
  schema: string | null;
  table: string;
  native?: string;
};

/** Parses with DuckDB, resolves every table to where MindsDB's name lives, refuses what reaches outside. */
const prepare = async (
  c: DuckDBConnection,
  catalog: CatalogResolver,
  text: string,
  db: string,
  natives: Map<string, { integration: string; sql: string }>,
  deadline?: Deadline,
): Promise<Prepared> => {
  const statement = await parseSelect(c, text);
  let localTables = 0;
  const externals: ExternalRef[] = [];
  const modelRefs: { node: AstNode; project: string; name: string }[] = [];
  // CTEs are resolved by scope and renamed; what is left is every other table reference.
  const { tables, deterministic } = await resolveScopes(statement, {
    nodes: 20_000,
    pause: async () => {
      await pause();
      deadline?.check();
    },
  });
  for (const n of tables) {
    deadline?.check();
    const catalogName = String(n.catalog_name ?? '');
    const schema = String(n.schema_name ?? '');
    const table = String(n.table_name);
    const native = !schema && !catalogName ? natives.get(table) : undefined;
    if (native) {
      externals.push({ node: n, integration: native.integration, schema: null, table, native: native.sql });
      continue;
    }
    if (catalogName) {
      // `project.model.3`: a model version, which DuckDB reads as catalog.schema.table.
      if (/^\d+$/.test(table)) {
        const modelProject = await catalog.model(catalogName, schema);
        if (modelProject) {
          modelRefs.push({ node: n, project: modelProject, name: `${schema}.${table}` });
          continue;
        }
      }
      const integration = await catalog.integration(catalogName);
      if (!integration)
        throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${catalogName} does not exist`);
      externals.push({ node: n, integration, schema, table });
      continue;
    }
    const database = schema || db;
    const modelProject = await catalog.model(database, table);
    if (modelProject) {
      modelRefs.push({ node: n, project: modelProject, name: table });
      continue;
    }
    const integration = await catalog.integration(database);
    if (integration) {
      externals.push({ node: n, integration, schema: null, table });
      continue;
    }
    const physical = await catalog.resolve(database, table, c);
    n.schema_name = physical.schema;
    n.table_name = physical.table;
    n.catalog_name = '';
    localTables++;
  }
  const names = constantColumnNames(statement);
  if (modelRefs.length > 0) {
    if (externals.length > 0)
      throw new SqlError(
        SqlErrorCode.Invalid,
        'Predictions over external databases: upload the rows as a file, or use a native query',
      );
    if (modelRefs.length > 1) throw new SqlError(SqlErrorCode.Invalid, 'One model per query');
    return { kind: 'model', statement, refs: modelRefs, names };
  }
  if (externals.length === 0)
    return { kind: 'local', sql: await printSelect(c, statement), names, deterministic };

  const integrations = new Set(externals.map((e) => e.integration.toLowerCase()));
  if (localTables === 0 && integrations.size === 1 && externals.every((e) => !e.native))
    return {
      kind: 'pushdown',
      integration: externals[0]!.integration,
      sql: stripQualifier(text, externals[0]!.integration),
    };

  const where = (statement.node as AstNode | undefined)?.where_clause as AstNode | undefined;
  const fetches = externals.map((e, i): ExternalFetch => {
    const temp = `__mindledger_external_${i}`;
    const alias = String(e.node.alias || e.table);
    e.node.schema_name = '';
    e.node.catalog_name = '';
    e.node.table_name = temp;
    if (!e.node.alias) e.node.alias = alias;
    if (e.native) return { temp, integration: e.integration, sql: e.native };
    const filters = pushableFilters(where, alias, externals.length + localTables === 1);
    const { schema, table } = e;
    return {
      temp,
      integration: e.integration,
      sql: (quote) =>
        `SELECT * FROM ${schema ? `${quote(schema)}.` : ''}${quote(table)}${
          filters.length ? ` WHERE ${filters.map((f) => f(quote)).join(' AND ')}` : ''
        }`,
    };
  });
  return { kind: 'federated', sql: await printSelect(c, statement), names, fetches };
};

const baseTable = (table: string, alias: string): AstNode => ({
  type: 'BASE_TABLE',
  alias,
  sample: null,
  query_location: 0,
  schema_name: '',
  table_name: table,
  column_name_alias: [],
  catalog_name: '',
  at_clause: null,
});

/** Types for a temporary table built from JS values. */
const columnTypes = (names: string[], rows: Record<string, unknown>[]) =>
  names.map((name) => {
    const values = rows.map((r) => r[name]).filter((v) => v !== null && v !== undefined);
    const type =
      values.length && values.every((v) => typeof v === 'boolean')
        ? 'BOOLEAN'
        : values.length && values.every((v) => typeof v === 'number')
          ? values.every((v) => Number.isInteger(v))
            ? 'BIGINT'
            : 'DOUBLE'
          : 'VARCHAR';
    return { name, type };
  });

/** Equality conditions `col = constant` (ANDed) of a WHERE clause: the input of a one-row prediction. */
const whereEqualities = (where: AstNode | null | undefined): Record<string, unknown> => {
  const row: Record<string, unknown> = {};
  const visit = (n: AstNode | null | undefined) => {
    if (!n) return;
    if (n.class === 'CONJUNCTION' && n.type === 'CONJUNCTION_AND')
      for (const c of n.children as AstNode[]) visit(c);
    else if (n.class === 'COMPARISON' && n.type === 'COMPARE_EQUAL') {
      let [col, value] = [n.left as AstNode, n.right as AstNode];
      if (col.class !== 'COLUMN_REF') [col, value] = [value, col];
      if (col.class !== 'COLUMN_REF' || value.class !== 'CONSTANT') return;
      const names = col.column_names as string[];
      const v = value.value as { is_null: boolean; value: unknown };
      row[names[names.length - 1]!] = v.is_null ? null : v.value;
    }
  };
  visit(where);
  return row;
};

/**
 * Computes a model's predictions into a temporary table and rewrites the query onto it. Alone in
 * FROM, the model predicts one row built from the WHERE equalities (`WHERE sqft = 823 AND …`);
 * joined, it predicts every row of the other side, which is materialised first and paired with its
 * predictions position by position (a POSITIONAL JOIN of two tables in the same order).
 */
const predictInto = async (
  c: DuckDBConnection,
  prepared: Extract<Prepared, { kind: 'model' }>,
  predictions: Predictions,
  temps: string[],
) => {
  const ref = prepared.refs[0]!;
  const predictor = await predictions.predictor(ref.project, ref.name);
  const statement = prepared.statement;
  // Only the model's columns the query uses are computed and loaded (a star wants them all).
  const modelAlias = String(ref.node.alias || ref.name);
  const wanted = new Set<string>();
  let everything = false;
  await walk(statement, (n) => {
    if (
      n.class === 'STAR' &&
      (!n.relation_name || String(n.relation_name).toLowerCase() === modelAlias.toLowerCase())
    )
      everything = true;
    if (n.class === 'COLUMN_REF') {
      const names = n.column_names as string[];
      if (names.length === 1 || names[0]!.toLowerCase() === modelAlias.toLowerCase())
        wanted.add(names[names.length - 1]!);
    }
  });
  const all = predictor.outputColumns.filter((col) => col !== '__mindsdb_row_id');
  const picked = everything ? all : all.filter((col) => wanted.has(col));
  const outputColumns = picked.length ? picked : [predictor.artifact.target];
  const predictOptions = { wanted: new Set(outputColumns) };
  // Predictions go straight into a typed temporary table through the appender.
  const load = async (temp: string, rows: Record<string, unknown>[]) => {
    temps.push(temp);
    const columns = columnTypes(outputColumns, rows);
    const q = (id: string) => `"${id.replace(/"/g, '""')}"`;
    await c.run(
      `CREATE OR REPLACE TEMP TABLE ${q(temp)} (${columns.map((col) => `${q(col.name)} ${col.type}`).join(', ')})`,
    );
    const appender = await c.createAppender(temp);
    try {
      for (const row of rows) {
        for (const col of columns) {
          const v = row[col.name];
          if (v === null || v === undefined) appender.appendNull();
          else if (col.type === 'DOUBLE') appender.appendDouble(v as number);
          else if (col.type === 'BIGINT') appender.appendBigInt(BigInt(v as number));
          else if (col.type === 'BOOLEAN') appender.appendBoolean(v as boolean);
          else appender.appendVarchar(typeof v === 'string' ? v : JSON.stringify(v));
        }
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  };
  let join: AstNode | undefined;
  await walk(statement, (n) => {
    if (n.type === 'JOIN' && (n.left === ref.node || n.right === ref.node)) join = n;
  });
  if (!join) {
    const input = whereEqualities((statement.node as AstNode).where_clause as AstNode | undefined);
    await load('__mindledger_prediction', predictor.predict([input], predictOptions));
    Object.assign(ref.node, baseTable('__mindledger_prediction', modelAlias));
    return printSelect(c, statement);
  }
  const other = (join.left === ref.node ? join.right : join.left) as AstNode;
  const otherAlias = String(other.alias || other.table_name || 'data');
  const template = await parseSelect(c, 'SELECT * FROM __mindledger_source');
  (template.node as AstNode).from_table = other;
  const source = await printSelect(c, template);
  temps.push('__mindledger_input');
  await c.run(`CREATE OR REPLACE TEMP TABLE __mindledger_input AS ${source}`);
  const reader = await c.runAndReadAll('SELECT * FROM __mindledger_input');
  const columns = reader.columnNames();
  const rows = reader.getRowsJson().map((r) => Object.fromEntries(columns.map((col, i) => [col, r[i]])));
  await load('__mindledger_prediction', predictor.predict(rows, predictOptions));
  const input = baseTable('__mindledger_input', otherAlias);
  const output = baseTable('__mindledger_prediction', modelAlias);
  if (join.left === ref.node) {
    join.left = output;
    join.right = input;
  } else {
    join.left = input;
    join.right = output;
  }
  join.ref_type = 'POSITIONAL';
  join.condition = null;
  join.join_type = 'INNER';
  return printSelect(c, statement);
};

/**
 * Runs one SELECT: DuckDB parses it, every table reference is resolved to where MindsDB's name
 * lives (projections, files, or external databases), table and scalar functions that reach outside
 * are refused, then it runs on a pooled connection with a time limit (interrupted) and a row limit
 * (the answer says it was cut).
 */
export const runSelect = async (
  duck: Duck,
  catalog: CatalogResolver,
  cache: PreparedCache,
  externals: Externals,
  predictions: Predictions,
  input: {
    sql: string;
    placeholders: string[];
    params: Record<string, unknown>;
    db: string;
    version: number;
    /** The projection runner's data epoch (see `ProjectionRunner.dataEpoch`). */
    dataEpoch: () => number;
    natives?: Map<string, { integration: string; sql: string }>;
  },
  limits: SelectLimits,
): Promise<TableAnswer> => {
  const deadline = limits.deadline ?? deadlineIn(limits.timeoutMs);
  const bound = bindParameters(input.sql, input.placeholders, input.params, limits.maxListItems);
  const natives = input.natives ?? new Map();
  const key = `${input.db}\u0000${bound.sql}\u0000${JSON.stringify([...natives])}`;
  const answerKeyOf = (p: Prepared) =>
    p.kind === 'local' && p.deterministic
      ? `${p.sql}\u0000${JSON.stringify(bound.values, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`
      : null;
  // A cached answer needs no connection at all.
  const known = cache.queries.get(input.version, key);
  const knownAnswerKey = known ? answerKeyOf(known) : null;
  const knownAnswer = knownAnswerKey === null ? undefined : cache.answers.get(input.version, knownAnswerKey);
  if (knownAnswer) return knownAnswer;

  const work = duck.withReader(
    async (c: DuckDBConnection): Promise<TableAnswer> => {
      // A request answered already (deadline passed while it waited for this connection, or the
      // client left) does not start.
      deadline.check();
      if (limits.signal?.aborted)
        throw new SqlError(SqlErrorCode.Interrupted, 'The client went away; the query was interrupted');
      // From here the deadline, or a client that goes away, interrupts whatever runs on `c`:
      // parsing (json_serialize_sql), views made for name resolution, loads, the query itself.
      // Repeatedly: an interrupt reaches only a DuckDB call already running, and a call can wait
      // for a thread of libuv's pool; later steps (dropping temporary tables) run regardless.
      let nagging: ReturnType<typeof setInterval> | undefined;
      const interrupt = () => {
        c.interrupt();
        nagging ??= setInterval(() => c.interrupt(), 100);
      };
      const timer = setTimeout(interrupt, deadline.remaining());
      const onAbort = interrupt;
      limits.signal?.addEventListener('abort', onAbort);
      const temps: string[] = [];
      try {
        let prepared = cache.queries.get(input.version, key);
        if (!prepared) {
          prepared = await prepare(c, catalog, bound.sql, input.db, natives, deadline);
          if (prepared.kind !== 'model') cache.queries.set(input.version, key, prepared);
        }
        deadline.check();

        const plan: Prepared = prepared;
        if (plan.kind === 'pushdown') {
          const db = await externals.get(plan.integration);
          // Our text quotes identifiers with double quotes; MySQL and MariaDB want backticks.
          const dialectText = db.engine === 'postgres' ? plan.sql : doubleQuotesToBackticks(plan.sql);
          const { text, params } = positional(dialectText, bound.values);
          const result = await db
            .query(`SELECT * FROM (${text}) AS mindledger_pushed LIMIT ${limits.rowLimit + 1}`, params)
            .catch((error: unknown) => {
              throw externalError(plan.integration, error);
            });
          const table = externalAnswer(result, limits.rowLimit, limits.maxAnswerBytes);
          return {
            type: 'table',
            column_names: table.column_names,
            column_types: table.column_types,
            data: table.data,
            ...(table.truncated ? { truncated: true as const } : {}),
          };
        }

        let sql: string;
        if (plan.kind === 'model') sql = await predictInto(c, plan, predictions, temps);
        else sql = plan.sql;
        if (plan.kind === 'federated') {
          for (const fetch of plan.fetches) {
            deadline.check();
            const db = await externals.get(fetch.integration);
            const native = typeof fetch.sql === 'string' ? fetch.sql : fetch.sql((id) => db.quote(id));
            const result = await db.query(native).catch((error: unknown) => {
              throw externalError(fetch.integration, error);
            });
            deadline.check();
            temps.push(fetch.temp);
            await loadIntoDuckDb(c, fetch.temp, result);
          }
        }
        deadline.check();
        // A reused DuckDB statement keeps the sampling seed it was planned with, and external tables
        // and predictions are made afresh each time: only deterministic local queries reuse one.
        const read = (result: DuckDBResult) =>
          readAnswer(result, {
            rowLimit: limits.rowLimit,
            maxBytes: limits.maxAnswerBytes,
            check: deadline.check,
          });
        const table =
          plan.kind === 'local' && plan.deterministic
            ? await readDeterministic(c, sql, bound.values, bound.types, read, input.dataEpoch)
            : await read(await c.stream(sql, bound.values, bound.types));
        const names = plan.names;
        const answer: TableAnswer = {
          type: 'table',
          column_names: table.column_names.map(
            (name, i) => (names?.length === table.column_names.length ? names[i] : undefined) ?? name,
          ),
          column_types: table.column_types,
          data: table.data,
          ...(table.truncated ? { truncated: true as const } : {}),
        };
        const answerKey = answerKeyOf(plan);
        if (answerKey !== null && table.data.length <= MAX_CACHED_ROWS && table.bytes <= MAX_CACHED_BYTES) {
          cache.answers.set(input.version, answerKey, answer);
          reusableAnswers.add(answer);
        }
        return answer;
      } catch (error) {
        if (duck.stopping)
          throw new SqlError(
            SqlErrorCode.Interrupted,
            'The server is shutting down; the query was interrupted',
          );
        if (deadline.expired()) throw deadline.error();
        if (limits.signal?.aborted)
          throw new SqlError(SqlErrorCode.Interrupted, 'The client went away; the query was interrupted');
        throw error;
      } finally {
        clearTimeout(timer);
        clearInterval(nagging);
        limits.signal?.removeEventListener('abort', onAbort);
        for (const temp of temps) await c.run(`DROP TABLE IF EXISTS "${temp}"`).catch(() => undefined);
      }
    },
    { sql: true },
  );
  // The answer does not wait past the deadline for work DuckDB does not interrupt at once
  // (planning a large query): that work keeps its connection until it stops.
  return withinDeadline(work, deadline);
};
