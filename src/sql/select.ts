import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import type { Duck } from '../duckdb/database';
import { parseSelect, printSelect, walk, type AstNode } from './ast';
import type { CatalogResolver } from './catalog';
import { SqlError, SqlErrorCode } from './errors';
import { readTable } from './values';

export type TableAnswer = {
  type: 'table';
  column_names: string[];
  column_types: string[];
  data: unknown[][];
  /** Present (true) when the answer was cut at the row limit. */
  truncated?: true;
};

export type SelectLimits = { rowLimit: number; timeoutMs: number; signal?: AbortSignal };

/** Table functions a query may use; everything else (read_csv, glob, query, duckdb_settings, …) is refused. */
const ALLOWED_TABLE_FUNCTIONS = new Set(['range', 'generate_series', 'unnest']);
/** Scalar functions that would reveal files or the server's configuration. */
const forbiddenFunction = (name: string) =>
  /^(read_|pragma_|duckdb_|sniff_csv|glob|getenv|current_setting|which_secret|query$|query_table$)/i.test(
    name,
  ) || /_scan$/i.test(name);

type Bindings = Record<string, DuckDBValue>;

/** Binds `:name`/`@name` placeholders; a list becomes `(v0, v1, …)` so that `IN :ids` works. */
const bindParameters = (sql: string, placeholders: string[], params: Record<string, unknown>) => {
  const values: Bindings = {};
  let out = sql;
  for (const name of new Set(placeholders)) {
    if (!(name in params))
      throw new SqlError(
        SqlErrorCode.MissingParameter,
        `Parameter is not set: ${name} (pass it in "params")`,
      );
    const value = params[name];
    if (Array.isArray(value)) {
      const names = value.map((_, i) => `${name}__${i}`);
      value.forEach((v, i) => (values[names[i]!] = toBinding(name, v)));
      out = out.replace(
        new RegExp(`\\$${name}\\b`, 'g'),
        `(${names.map((n) => `$${n}`).join(', ') || 'NULL'})`,
      );
    } else values[name] = toBinding(name, value);
  }
  return { sql: out, values };
};

const toBinding = (name: string, v: unknown): DuckDBValue => {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  throw new SqlError(
    SqlErrorCode.Invalid,
    `Parameter ${name} must be a string, number, boolean, null or a list of those`,
  );
};

/** MindsDB names an unaliased constant by its value (`select 'a'` → "a"); DuckDB quotes it. */
const mindsDbColumnNames = (statement: AstNode, duckNames: string[]) => {
  const node = statement.node as AstNode | undefined;
  const list = node?.type === 'SELECT_NODE' ? (node.select_list as AstNode[]) : undefined;
  if (!list || list.length !== duckNames.length) return duckNames;
  return duckNames.map((name, i) => {
    const item = list[i]!;
    if (item.alias || item.class !== 'CONSTANT') return name;
    const value = item.value as { is_null: boolean; value: unknown; type: { id: string } };
    return value.is_null ? 'NULL' : value.type.id === 'VARCHAR' ? String(value.value) : name;
  });
};

/**
 * Runs one SELECT: DuckDB parses it, every table reference is resolved to where MindsDB's name
 * lives, table and scalar functions that reach outside are refused, then it runs on a pooled
 * connection with a time limit (interrupted) and a row limit (the answer says it was cut).
 */
export const runSelect = async (
  duck: Duck,
  catalog: CatalogResolver,
  input: { sql: string; placeholders: string[]; params: Record<string, unknown>; db: string },
  limits: SelectLimits,
): Promise<TableAnswer> => {
  const bound = bindParameters(input.sql, input.placeholders, input.params);
  return duck.withReader(async (c: DuckDBConnection) => {
    const statement = await parseSelect(c, bound.sql);
    const ctes = new Set<string>();
    await walk(statement, (n) => {
      const map = (n.cte_map as { map?: { key: string }[] } | undefined)?.map;
      for (const entry of map ?? []) ctes.add(entry.key.toLowerCase());
    });
    await walk(statement, async (n) => {
      if (n.type === 'BASE_TABLE') {
        const catalogName = String(n.catalog_name ?? '');
        const schema = String(n.schema_name ?? '');
        const table = String(n.table_name);
        if (!schema && !catalogName && ctes.has(table.toLowerCase())) return;
        if (catalogName)
          throw new SqlError(
            SqlErrorCode.UnknownTable,
            `Table ${catalogName}.${schema}.${table} cannot be read: querying external databases is not available in this version`,
          );
        const physical = await catalog.resolve(schema || input.db, table);
        n.schema_name = physical.schema;
        n.table_name = physical.table;
        n.catalog_name = '';
      } else if (n.type === 'TABLE_FUNCTION') {
        const fn = String((n.function as AstNode | undefined)?.function_name ?? '');
        if (!ALLOWED_TABLE_FUNCTIONS.has(fn.toLowerCase()))
          throw new SqlError(SqlErrorCode.Forbidden, `Table function ${fn}() is not allowed`);
      } else if (n.class === 'FUNCTION' && forbiddenFunction(String(n.function_name))) {
        throw new SqlError(SqlErrorCode.Forbidden, `Function ${String(n.function_name)}() is not allowed`);
      }
    });
    const sql = await printSelect(c, statement);

    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      c.interrupt();
    }, limits.timeoutMs);
    const onAbort = () => c.interrupt();
    limits.signal?.addEventListener('abort', onAbort);
    try {
      const reader = await c.streamAndReadUntil(sql, limits.rowLimit + 1, bound.values);
      const table = readTable(reader, limits.rowLimit);
      return {
        type: 'table',
        column_names: mindsDbColumnNames(statement, reader.columnNames()),
        column_types: table.column_types,
        data: table.data,
        ...(table.truncated ? { truncated: true as const } : {}),
      };
    } catch (error) {
      if (timedOut)
        throw new SqlError(
          SqlErrorCode.Timeout,
          `The query ran longer than ${limits.timeoutMs} ms and was interrupted`,
        );
      if (limits.signal?.aborted)
        throw new SqlError(SqlErrorCode.Interrupted, 'The client went away; the query was interrupted');
      throw error;
    } finally {
      clearTimeout(timer);
      limits.signal?.removeEventListener('abort', onAbort);
    }
  });
};
