import { quoteMysqlIdent } from '../../../shared/quoting';
import {
  ToolError,
  type QueryRows,
  type SqlScope,
  type SqlToolPort,
  type TableDescription,
} from '../../../engines/agentLoop';
import { nameKey } from '../../../shared/names';
import type { TableAnswer } from '../../answers';
import { SqlError, SqlErrorCode, toSqlError } from '../../errors';
import { leadingKeyword, trimStatement } from '../../lexical';
import type { TablePolicy } from '../../pipeline/plan';

/** What the agent tools need of the SQL engine. */
type ScopedSqlEngine = {
  /** One SELECT in MySQL's dialect, in `db`, reading only what `policy` allows, at most `rowLimit` rows. */
  select(
    sql: string,
    db: string,
    options: { policy: TablePolicy; rowLimit: number; signal: AbortSignal },
  ): Promise<TableAnswer>;
  /** The tables of a database (a project's, the files, an integration's), as SHOW TABLES lists them. */
  tablesOf(db: string, signal: AbortSignal): Promise<string[]>;
};

/** fnmatch-style: `*` any run, `?` one character; case-insensitive, as MindsDB's table allowlist. */
const matcher = (pattern: string) =>
  new RegExp(
    `^${pattern
      .toLowerCase()
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('')}$`,
  );

/** The allowlist of a scope as qualified patterns (`db.table`), unqualified ones read in its database. */
const patternsOf = (scope: SqlScope) => {
  const base = scope.database === null ? null : nameKey(scope.database);
  if (scope.tables.length === 0) return base === null ? [] : [`${base}.*`];
  return scope.tables.map((t) =>
    t.includes('.') || base === null ? t.toLowerCase() : `${base}.${t.toLowerCase()}`,
  );
};

const policyOf = (scope: SqlScope): TablePolicy => {
  const patterns = patternsOf(scope);
  const matchers = patterns.map(matcher);
  return {
    // What a model writes is never trusted (a prompt can steer it): on an external database it runs
    // read-only, with only the allow-listed functions, whoever asked.
    readOnlyRole: 'agent',
    check: (database, table) => {
      const name = `${nameKey(database)}.${table.toLowerCase()}`;
      if (!matchers.some((m) => m.test(name)))
        throw new SqlError(
          SqlErrorCode.Forbidden,
          `Table ${database}.${table} is not available to this skill. Available: ${patterns.join(', ') || '(none)'}`,
        );
    },
  };
};

/** Models write SQL in Markdown fences, and end it with semicolons. */
const stripFences = (sql: string) =>
  trimStatement(
    sql
      .trim()
      .replace(/^```[a-zA-Z]*\s*/, '')
      .replace(/```$/, ''),
  );

/** A table name as the model wrote it (`t`, `db.t`, backticked or not) → backticked parts. */
const quotedName = (name: string) =>
  name
    .split('.')
    .map((part) => quoteMysqlIdent(part.trim().replace(/^[`"]|[`"]$/g, '')))
    .join('.');

/**
 * The SQL tools' port on our own engine: the same sandbox as `POST /api/sql/query`, and on top of it
 * read-only statements, the skill's tables only (checked on the parse tree, by the planner, for
 * every table reference however it is written), and an automatic row cap. A refused or failing
 * query goes back to the model as the tool's error, so it can correct itself.
 */
export const agentSqlPort = (engine: ScopedSqlEngine): SqlToolPort => {
  const run = async (scope: SqlScope, sql: string, rowLimit: number, signal: AbortSignal) => {
    const text = stripFences(sql);
    const keyword = leadingKeyword(text);
    if (keyword !== 'SELECT' && keyword !== 'WITH')
      throw new ToolError(`Only SELECT queries can run here (read-only); got ${keyword || 'nothing'}`, {
        rejected: true,
        sql: text,
      });
    try {
      return {
        text,
        answer: await engine.select(text, scope.database ?? 'mindsdb', {
          policy: policyOf(scope),
          rowLimit,
          signal,
        }),
      };
    } catch (error) {
      const e = toSqlError(error);
      throw new ToolError(e.message, { rejected: e.code === SqlErrorCode.Forbidden, sql: text });
    }
  };

  return {
    listTables: async (scope, { signal }) => {
      const patterns = patternsOf(scope);
      if (patterns.every((p) => !/[*?]/.test(p))) return patterns;
      const databases = [...new Set(patterns.map((p) => p.slice(0, p.indexOf('.'))))];
      const found: string[] = [];
      for (const db of databases) {
        const tables = await engine.tablesOf(db, signal).catch((error: unknown) => {
          throw new ToolError(toSqlError(error).message);
        });
        for (const t of tables) found.push(`${db}.${t}`);
      }
      const matchers = patterns.map(matcher);
      return found.filter((name) => matchers.some((m) => m.test(name.toLowerCase())));
    },

    describe: async (scope, tables, { sampleRows, signal }) => {
      const described: TableDescription[] = [];
      for (const table of tables) {
        const { answer } = await run(scope, `SELECT * FROM ${quotedName(table)}`, sampleRows, signal);
        described.push({
          name: table,
          columns: answer.column_names.map((name, i) => ({
            name,
            type: answer.column_types[i] ?? 'VARCHAR',
          })),
          sampleRows: answer.data.map((row) =>
            Object.fromEntries(answer.column_names.map((n, i) => [n, row[i]])),
          ),
        });
      }
      return described;
    },

    query: async (scope, sql, { limit, signal }): Promise<QueryRows> => {
      const { answer } = await run(scope, sql, limit, signal);
      return {
        columns: answer.column_names,
        rows: answer.data,
        ...(answer.truncated ? { truncated: true } : {}),
      };
    },
  };
};
