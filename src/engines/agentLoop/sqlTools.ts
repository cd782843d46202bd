import { quoteMysqlIdent } from '../../shared/quoting';
import { z } from 'zod';
import { defineTool, toJsonText, ToolError, type AgentTool } from './tools';
import { messageOf } from '../../shared/errors';
import { resultDigest } from './resultDigest';

/**
 * What a sql skill (or an agent's `data.tables`) lets the model read. The port implementing it
 * enforces it: read-only statements, tables inside the allowlist (checked on the parse tree), an
 * automatic LIMIT. The loop never trusts the model's SQL.
 */
export type SqlScope = {
  /** The skill this scope comes from (`data` for an agent's `data.tables`). */
  readonly source: string;
  /** The database unqualified table names refer to; null when every allowed table is qualified. */
  readonly database: string | null;
  /**
   * Allowed tables: `t` (in `database`), `db.t`, or wildcards `db.*`, `t_*` (fnmatch, as MindsDB v26).
   * Empty means every table of `database`.
   */
  readonly tables: readonly string[];
  /** The skill's description of its data, for the model. */
  readonly description?: string;
};

export type TableColumn = { readonly name: string; readonly type: string };
export type TableDescription = {
  /** As the model should write it in a query (e.g. `db.t`). */
  readonly name: string;
  readonly columns: readonly TableColumn[];
  readonly sampleRows: readonly Readonly<Record<string, unknown>>[];
};
export type QueryRows = {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** The port cut the answer (the automatic LIMIT, or its own bounds). */
  readonly truncated?: boolean;
};

/**
 * Implemented by the lead on the SQL engine. Throw `ToolError` (with `{rejected: true, sql}` for a
 * refused statement) for anything the model should read and fix; the message goes back to it.
 */
export interface SqlToolPort {
  listTables(scope: SqlScope, options: { signal: AbortSignal }): Promise<readonly string[]>;
  /** Columns and up to `sampleRows` rows of each table; unknown or forbidden tables are a ToolError. */
  describe(
    scope: SqlScope,
    tables: readonly string[],
    options: { sampleRows: number; signal: AbortSignal },
  ): Promise<readonly TableDescription[]>;
  /** One read-only statement; at most `limit` rows (add a LIMIT when the query has none). */
  query(scope: SqlScope, sql: string, options: { limit: number; signal: AbortSignal }): Promise<QueryRows>;
}

type SqlToolNames = { readonly listTables: string; readonly schema: string; readonly query: string };
export const SQL_TOOL_BASE_NAMES: SqlToolNames = {
  listTables: 'sql_db_list_tables',
  schema: 'sql_db_schema',
  query: 'sql_db_query',
};

const backticked = (name: string) => name.split('.').map(quoteMysqlIdent).join('.');

const scopeText = (scope: SqlScope) => {
  const where = scope.tables.length
    ? `tables ${scope.tables.join(', ')}${scope.database ? ` (database ${scope.database})` : ''}`
    : `the tables of database ${scope.database ?? '?'}`;
  return scope.description ? `${where}. About this data: ${scope.description}` : where;
};

const cellText = (v: unknown) => {
  if (v === null || v === undefined) return 'NULL';
  const s = typeof v === 'string' ? v : toJsonText(v);
  return s.length > 100 ? `${s.slice(0, 100)}…` : s.replace(/[\t\n]/g, ' ');
};

/** LangChain's `sql_db_schema` layout, which models have seen a lot of. */
const formatTableDescription = (t: TableDescription) => {
  const columns = t.columns.map((c) => `  ${c.name} ${c.type}`).join(',\n');
  const header = t.columns.map((c) => c.name).join('\t');
  const rows = t.sampleRows.map((r) => t.columns.map((c) => cellText(r[c.name])).join('\t'));
  return [
    `CREATE TABLE ${t.name} (\n${columns}\n)`,
    `/*\n${t.sampleRows.length} rows from ${t.name} table:\n${header}\n${rows.join('\n')}\n*/`,
  ].join('\n\n');
};

/** Whole rows while they fit, so the model never sees half a row; says how many it left out. */
export const formatQueryRows = (result: QueryRows, maxChars: number) => {
  const rows: (readonly unknown[])[] = [];
  let size = 100 + toJsonText(result.columns).length;
  for (const row of result.rows) {
    const cost = toJsonText(row).length + 1;
    if (size + cost > maxChars && rows.length > 0) break;
    rows.push(row);
    size += cost;
  }
  const omitted = result.rows.length - rows.length;
  return toJsonText({
    columns: result.columns,
    rows,
    row_count: result.rows.length,
    ...(omitted > 0 ? { rows_not_shown: omitted } : {}),
    ...(result.truncated ? { truncated: true } : {}),
  });
};

/** Models send `"a, b"` as often as `["a", "b"]` (MindsDB's tool took a comma-separated string). */
const tableList = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .split(',')
          .map((s) => s.trim().replace(/`/g, ''))
          .filter(Boolean)
      : v,
  z.array(z.string().min(1)).min(1),
);

/** The three MindsDB text2sql tools over one scope. */
export const sqlTools = (
  scope: SqlScope,
  port: SqlToolPort,
  names: SqlToolNames = SQL_TOOL_BASE_NAMES,
  options: { queryLimit?: number; sampleRows?: number } = {},
): AgentTool[] => {
  const queryLimit = options.queryLimit ?? 100;
  const sampleRows = options.sampleRows ?? 3;
  return [
    defineTool({
      name: names.listTables,
      kind: 'sql_list_tables',
      description: `List the tables you can query: ${scopeText(scope)}. Takes no arguments; answers a comma-separated list of table names to use as written. Call it first when you do not know which table holds the data.`,
      schema: z.object({}).describe('No arguments'),
      run: async (_args, { signal }) => {
        const tables = await port.listTables(scope, { signal });
        return {
          content: tables.length ? tables.map(backticked).join(', ') : 'No tables are available.',
          rows: tables.length,
        };
      },
    }),
    defineTool({
      name: names.schema,
      kind: 'sql_schema',
      description: `Show the columns and ${sampleRows} sample rows of the given tables (${scopeText(scope)}). Make sure the tables exist by calling ${names.listTables} first. Read this before writing a query against a table.`,
      schema: z.object({
        tables: tableList.describe(`Table names, as ${names.listTables} lists them`),
      }),
      run: async ({ tables }, { signal }) => {
        const described = await port.describe(scope, tables, { sampleRows, signal });
        return { content: described.map(formatTableDescription).join('\n\n'), rows: described.length };
      },
    }),
    defineTool({
      name: names.query,
      kind: 'sql_query',
      description: [
        `Run one read-only SQL query (SELECT, SHOW, DESCRIBE) on ${scopeText(scope)} and get its rows as JSON; at most ${queryLimit} rows come back.`,
        `Check the columns with ${names.schema} before querying a table. Use SELECT DISTINCT to see the values of a categorical column before filtering on it; count with COUNT(*) rather than fetching rows; quote identifiers with backticks; use NOW() or CURRENT_DATE for relative dates.`,
        'One statement per call; never write (INSERT, UPDATE, DELETE, CREATE, DROP). If the answer is {"error": …}, fix the query and call again.',
      ].join(' '),
      schema: z.object({
        query: z.string().min(1).describe('One SQL statement, without markdown fences'),
      }),
      run: async ({ query }, { signal, maxResultChars }) => {
        const sql = query
          .trim()
          .replace(/^```(?:sql)?\s*/i, '')
          .replace(/\s*```$/, '')
          .trim();
        let result: QueryRows;
        try {
          result = await port.query(scope, sql, { limit: queryLimit, signal });
        } catch (error) {
          // Events name the SQL that failed or was refused, whoever raised the error.
          if (signal.aborted) throw error;
          if (error instanceof ToolError) throw new ToolError(error.message, { ...error.details, sql });
          throw new ToolError(messageOf(error), { sql });
        }
        return {
          content: formatQueryRows(result, maxResultChars),
          rows: result.rows.length,
          digest: resultDigest(result.columns, result.rows),
          sql,
        };
      },
    }),
  ];
};
