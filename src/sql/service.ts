import os from 'node:os';
import path from 'node:path';
import type { AppContext } from '../context';
import { nameKey } from '../shared/names';
import { catalogResolver, INFORMATION_SCHEMA_TABLES, installCatalog, PROJECT_TABLES } from './catalog';
import { configureServerPaths, externalError, SqlError, SqlErrorCode, toSqlError } from './errors';
import { leadingKeyword, quoteModelVersions, toDuckDbDialect, trimStatement } from './lexical';
import { isClientSessionVariable, mysqlCompatAnswers } from './mysqlCompat';
import { isSyntaxProblem, parseMindsStatement, type MindsStatement } from './parse';
import { isReusableAnswer, preparedCache, runSelect, type TableAnswer } from './select';
import { extractNativeQueries } from './federation';
import { addModelJoinConditions } from './modelJoins';
import type { ExternalDatabases } from '../databases/pools';
import { modelTable, type ModelView } from '../models/present';
import type { SqlPorts } from './ports';
import { invalid } from '../shared/errors';
import { runMindsStatement, type OkAnswer } from './statements';
import { deadlineIn, withinDeadline, type Deadline } from './deadline';

export type SqlContext = { db?: string; [key: string]: unknown };
export type ErrorAnswer = { type: 'error'; error_code: number; error_message: string };
export type SqlAnswer = (TableAnswer | OkAnswer | ErrorAnswer) & { context: SqlContext };

const DEFAULT_DB = 'mindsdb';
/** Statements DuckDB would run but that must never reach it from a client. */
const FORBIDDEN = new Set([
  'INSERT',
  'DELETE',
  'TRUNCATE',
  'MERGE',
  'COPY',
  'EXPORT',
  'IMPORT',
  'ATTACH',
  'DETACH',
  'INSTALL',
  'LOAD',
  'PRAGMA',
  'CALL',
  'CHECKPOINT',
  'FORCE',
  'VACUUM',
  'ANALYZE',
  'GRANT',
  'REVOKE',
  'COMMENT',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'ABORT',
  'PREPARE',
  'EXECUTE',
  'DEALLOCATE',
  'RESET',
  'SUMMARIZE',
  'EXPLAIN',
]);
const SELECT_LIKE = new Set(['SELECT', 'WITH', 'VALUES', 'FROM', 'TABLE']);

const str = (s: string) => `'${s.replace(/'/g, "''")}'`;

export const sqlService = (ctx: AppContext, services: SqlPorts, externals: ExternalDatabases) => {
  const { models } = services;
  const catalog = catalogResolver({
    isProject: async (name) => (await services.projects.find(name))?.name,
    isIntegration: async (name) => (await services.databases.findIntegration(name))?.name,
    isFile: async (name) => ((await services.files.find(name)) ? nameKey(name) : undefined),
    isModel: (project, name) => models.exists(project, name),
  });
  const prepared = preparedCache();
  // DuckDB's IO errors name files by absolute path; none of this server's may reach a client.
  configureServerPaths([
    ctx.config.dataDir,
    ctx.config.duckdbTempDirectory,
    path.dirname(path.resolve(ctx.config.duckdbFile)),
    process.cwd(),
    os.tmpdir(),
    os.homedir(),
  ]);
  /**
   * Every step after this one is linear in the text, but DuckDB plans some large queries for
   * seconds without heeding an interrupt (a 15,000-term OR: 3 s): the text is capped first.
   */
  const checkQuerySize = (query: string) => {
    const bytes = Buffer.byteLength(query, 'utf8');
    if (bytes > ctx.config.sqlMaxQueryBytes)
      throw new SqlError(
        SqlErrorCode.TooLarge,
        `The query is ${bytes} bytes; SQL_MAX_QUERY_BYTES allows ${ctx.config.sqlMaxQueryBytes}`,
      );
  };
  const limits = {
    rowLimit: ctx.config.sqlRowLimit,
    timeoutMs: ctx.config.sqlTimeoutMs,
    maxListItems: ctx.config.sqlMaxListParam,
    maxAnswerBytes: ctx.config.sqlMaxAnswerBytes,
  };
  const dataEpoch = () => ctx.projections.dataEpoch;

  // The same text, database and parameters give the same answer until the projections move on
  // (for deterministic queries): repeated queries skip even the dialect rewriting.
  let answersVersion = -1;
  const answers = new Map<string, TableAnswer>();
  const select = async (
    sql: string,
    db: string,
    params: Record<string, unknown>,
    deadline: Deadline,
    signal?: AbortSignal,
  ) => {
    const version = ctx.projections.version;
    if (version !== answersVersion) {
      answers.clear();
      answersVersion = version;
    }
    const key = `${db}\u0000${sql}\u0000${JSON.stringify(params)}`;
    const known = answers.get(key);
    if (known) return known;
    const answer = await selectFresh(sql, db, params, deadline, signal);
    if (isReusableAnswer(answer) && answersVersion === version) {
      if (answers.size >= 500) answers.delete(answers.keys().next().value as string);
      answers.set(key, answer);
    }
    return answer;
  };
  const selectFresh = async (
    sql: string,
    db: string,
    params: Record<string, unknown>,
    deadline: Deadline,
    signal?: AbortSignal,
  ) => {
    // Each rewriting step is linear in the text (at most SQL_MAX_QUERY_BYTES); the deadline is
    // checked between them and the name lookups they make.
    const extracted = await extractNativeQueries(sql, (name) => catalog.integration(name));
    deadline.check();
    const converted = toDuckDbDialect(extracted.sql);
    converted.sql = quoteModelVersions(converted.sql);
    deadline.check();
    const dialect = {
      ...converted,
      sql: await addModelJoinConditions(
        converted.sql,
        async (schema, table) => (await catalog.model(schema ?? db, table)) !== undefined,
      ),
    };
    deadline.check();
    return runSelect(
      ctx.duck,
      catalog,
      prepared,
      externals,
      models,
      { ...dialect, params, db, version: ctx.projections.version, dataEpoch, natives: extracted.natives },
      { ...limits, deadline, signal },
    );
  };
  /** Our own SQL (already DuckDB dialect, MindsDB names) wrapped around a client's WHERE/LIKE. */
  const internal = (
    sql: string,
    db: string,
    deadline: Deadline,
    params: Record<string, unknown> = {},
    placeholders: string[] = [],
  ) =>
    runSelect(
      ctx.duck,
      catalog,
      prepared,
      externals,
      models,
      { sql, placeholders, params, db, version: ctx.projections.version, dataEpoch },
      { ...limits, deadline },
    );

  const userFilter = (where: string | null) => {
    if (!where) return { clause: '', placeholders: [] as string[] };
    const d = toDuckDbDialect(where);
    return { clause: ` WHERE ${d.sql}`, placeholders: d.placeholders };
  };

  const isProject = async (name: string) => (await services.projects.find(name)) !== undefined;

  const show = async (
    s: Extract<MindsStatement, { kind: 'Show' }>,
    db: string,
    params: Record<string, unknown>,
    deadline: Deadline,
  ) => {
    const compat = mysqlCompatAnswers[s.what];
    if (compat) return compat();
    const like = s.like === null ? null : str(s.like);
    const where = userFilter(s.where);
    const wrap = async (inner: string, nameColumn: string) =>
      internal(
        `SELECT * FROM (${inner}) AS shown${like ? ` WHERE "${nameColumn}" LIKE ${like}` : ''}${where.clause ? (like ? ' AND ' : ' WHERE ') + where.clause.slice(7) : ''}`,
        db,
        deadline,
        params,
        where.placeholders,
      );
    switch (s.what) {
      case 'DATABASES':
        return wrap(
          `SELECT NAME AS "Database"${s.full ? ', TYPE, ENGINE' : ''} FROM information_schema.DATABASES`,
          'Database',
        );
      case 'PROJECTS':
        return wrap(
          `SELECT NAME AS project FROM information_schema.DATABASES WHERE TYPE = 'project'`,
          'project',
        );
      case 'TABLES': {
        const target = s.from ?? db;
        if (!(await services.databases.exists(target)))
          throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${target} does not exist`);
        const column = `Tables_in_${target}`;
        const integration = await catalog.integration(target);
        if (integration) {
          // An external database lists its own tables.
          const tables = await (await externals.get(integration)).listTables().catch((error: unknown) => {
            throw externalError(integration, error);
          });
          const like =
            s.like === null
              ? null
              : new RegExp(
                  `^${s.like
                    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
                    .replace(/%/g, '.*')
                    .replace(/_/g, '.')}$`,
                  'i',
                );
          const rows = tables
            .filter((t) => !like || like.test(t))
            .map((t) => (s.full ? [t, 'BASE TABLE'] : [t]));
          return {
            type: 'table' as const,
            column_names: s.full ? [column, 'Table_type'] : [column],
            column_types: s.full ? ['VARCHAR', 'VARCHAR'] : ['VARCHAR'],
            data: rows,
          };
        }
        return wrap(
          `SELECT TABLE_NAME AS "${column}"${s.full ? ', TABLE_TYPE AS "Table_type"' : ''} FROM information_schema.TABLES WHERE lower(TABLE_SCHEMA) = ${str(nameKey(target))}`,
          column,
        );
      }
      case 'ML_ENGINES':
      case 'HANDLERS':
        return wrap(`SELECT * FROM information_schema.${s.what}`, 'NAME');
      default: {
        // SHOW MODELS | AGENTS | SKILLS | CHATBOTS | KNOWLEDGE_BASES | JOBS | VIEWS | TRIGGERS
        const project = s.from ?? db;
        if (s.from && !(await isProject(s.from)))
          throw new SqlError(SqlErrorCode.UnknownDatabase, `Project ${s.from} does not exist`);
        const scoped = (await isProject(project)) ? ` WHERE lower(PROJECT) = ${str(nameKey(project))}` : '';
        return wrap(`SELECT * FROM information_schema.${s.what}${scoped}`, 'NAME');
      }
    }
  };

  const describe = async (
    d: Extract<MindsStatement, { kind: 'Describe' }>,
    db: string,
    deadline: Deadline,
  ) => {
    const [first, second, third] = d.name;
    const kind = d.what ?? 'MODEL';
    if (kind === 'MODEL') {
      const project = second !== undefined ? first! : db;
      const ref = second !== undefined ? [second, third].filter(Boolean).join('.') : first!;
      const records = await models.describe(project, ref, 'info');
      const columns = Object.keys(records[0] ?? {});
      return {
        type: 'table' as const,
        column_names: columns,
        column_types: columns.map(() => 'VARCHAR'),
        data: records.map((r) => columns.map((c) => (r as Record<string, unknown>)[c] ?? null)),
      };
    }
    if (kind === 'DATABASE' || kind === 'PROJECT') {
      const t = await internal(
        `SELECT * FROM information_schema.DATABASES WHERE lower(NAME) = ${str(nameKey(first!))}`,
        db,
        deadline,
      );
      if (t.data.length === 0)
        throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${first} does not exist`);
      return t;
    }
    if (kind === 'ML_ENGINE')
      return internal(
        `SELECT * FROM information_schema.ML_ENGINES WHERE lower(NAME) = ${str(nameKey(first!))}`,
        db,
        deadline,
      );
    const project = second !== undefined ? first! : db;
    const name = second ?? first!;
    const table = kind === 'KNOWLEDGE_BASE' ? 'KNOWLEDGE_BASES' : `${kind}S`;
    const t = await internal(
      `SELECT * FROM information_schema.${table} WHERE lower(PROJECT) = ${str(nameKey(project))} AND lower(NAME) = ${str(nameKey(name))}`,
      db,
      deadline,
    );
    if (t.data.length === 0)
      throw new SqlError(
        SqlErrorCode.NotFound,
        `${kind.charAt(0)}${kind.slice(1).toLowerCase().replace('_', ' ')} ${project}.${name} does not exist`,
      );
    return t;
  };

  const set = async (text: string) => {
    const name =
      /^(?:(?:GLOBAL|SESSION|LOCAL)\s+)?@{0,2}(?:(?:session|global|local)\.)?([A-Za-z_][A-Za-z0-9_]*)/i.exec(
        text,
      )?.[1] ?? '';
    if (isClientSessionVariable(name)) return { type: 'ok' as const, affected_rows: null };
    const settings = await ctx.duck.query('SELECT name FROM duckdb_settings() WHERE lower(name) = lower(?)', [
      name,
    ]);
    if (settings.length > 0)
      throw new SqlError(
        SqlErrorCode.Forbidden,
        `SET ${name} is not allowed: the database's settings cannot be changed from SQL`,
      );
    return { type: 'ok' as const, affected_rows: null };
  };

  const execute = async (
    query: string,
    context: SqlContext,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<SqlAnswer> => {
    // SQL_TIMEOUT_MS counts from here: rewriting, name resolution, fetches and DuckDB's work.
    const deadline = deadlineIn(ctx.config.sqlTimeoutMs);
    let db = typeof context.db === 'string' && context.db ? context.db : DEFAULT_DB;
    const answer = async (): Promise<TableAnswer | OkAnswer> => {
      checkQuerySize(query);
      const sql = trimStatement(query);
      if (!sql) throw new SqlError(SqlErrorCode.Syntax, 'The query is empty');
      const keyword = leadingKeyword(sql);
      if (SELECT_LIKE.has(keyword))
        return withinDeadline(select(sql, db, params, deadline, signal), deadline);
      if (FORBIDDEN.has(keyword))
        throw new SqlError(
          SqlErrorCode.Forbidden,
          `${keyword} is not allowed: the tables are projections of the event log and change only through commands`,
        );
      const parsed = parseMindsStatement(sql);
      if (isSyntaxProblem(parsed)) {
        if (
          ['UPDATE', 'DROP', 'ALTER', 'CREATE'].includes(keyword) &&
          !/\b(PROJECT|DATABASE|SCHEMA|SKILL|AGENT|CHATBOT)\b/i.test(sql.slice(0, 40))
        )
          throw new SqlError(
            SqlErrorCode.Forbidden,
            `${keyword} of tables is not allowed: the tables are projections of the event log and change only through commands`,
          );
        throw new SqlError(
          SqlErrorCode.Syntax,
          `Syntax error at line ${parsed.line}, column ${parsed.column}: ${parsed.message}`,
        );
      }
      switch (parsed.kind) {
        case 'Show':
          return withinDeadline(show(parsed, db, params, deadline), deadline);
        case 'Describe':
          return withinDeadline(describe(parsed, db, deadline), deadline);
        case 'Use': {
          if (!(await services.databases.exists(parsed.name)))
            throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${parsed.name} does not exist`);
          db = parsed.name;
          return { type: 'ok', affected_rows: null };
        }
        case 'Set':
          return set(parsed.text);
        case 'CreateModel': {
          const project = parsed.name.project ?? db;
          const created = await createModel(project, parsed);
          return { type: 'table', column_types: [], ...modelTable(created, project) };
        }
        case 'RetrainModel': {
          const project = parsed.name.project ?? db;
          const retrained = await models.retrain(project, parsed.name.name, {
            ...(parsed.from ? { query: parsed.from.query, sourceDatabase: parsed.from.database } : {}),
            ...(parsed.target ? { target: parsed.target } : {}),
            options: parsed.options,
          });
          return { type: 'table', column_types: [], ...modelTable(retrained, project) };
        }
        case 'DropModel': {
          const [a, b, c] = parsed.name;
          const qualified = b !== undefined && !/^\d+$/.test(b);
          const project = qualified ? a! : db;
          const ref = qualified ? [b, c].filter(Boolean).join('.') : parsed.name.join('.');
          if (parsed.ifExists && !(await models.exists(project, ref)))
            return { type: 'ok', affected_rows: null };
          await models.remove(project, ref);
          return { type: 'ok', affected_rows: null };
        }
        default:
          return runMindsStatement(services, parsed, db);
      }
    };
    try {
      const result = await answer();
      return { ...result, context: { ...context, db } };
    } catch (error) {
      const e = toSqlError(error);
      if (e.code === SqlErrorCode.Internal) ctx.logger.error({ err: error }, 'SQL statement failed');
      return { type: 'error', error_code: e.code, error_message: e.message, context: { ...context, db } };
    }
  };

  /** CREATE MODEL: the training query runs in `FROM db` (a file, a project, or an external database). */
  async function createModel(
    project: string,
    s: Extract<MindsStatement, { kind: 'CreateModel' }>,
  ): Promise<ModelView> {
    if (!s.from) throw invalid('CREATE MODEL needs FROM <database> (SELECT …): this engine learns from rows');
    if (!(await services.databases.exists(s.from.database)))
      throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${s.from.database} does not exist`);
    return models.create(project, {
      name: s.name.name,
      replace: s.replace,
      ifNotExists: s.ifNotExists,
      target: s.target,
      query: s.from.query,
      sourceDatabase: s.from.database,
      options: s.options,
    });
  }

  return {
    execute,
    install: () => installCatalog(ctx.duck.writer),
    tables: { INFORMATION_SCHEMA_TABLES, PROJECT_TABLES },

    /** POST /api/projects/{p}/models: the body's statement must be a CREATE MODEL (MindsDB's checks, in order). */
    createModelFromRest: async (project: string, query: string): Promise<ModelView> => {
      try {
        checkQuerySize(query);
      } catch (error) {
        throw invalid((error as Error).message);
      }
      const parsed = parseMindsStatement(trimStatement(query));
      if (isSyntaxProblem(parsed)) {
        if (/^\s*CREATE\s+(OR\s+REPLACE\s+)?(MODEL|PREDICTOR)\b/i.test(query))
          throw invalid(
            `SQL CREATE statement is invalid: ${query} (${parsed.message})`,
            'Invalid query string',
          );
        throw invalid(`Not a CREATE MODEL statement: ${query}`, 'Invalid CREATE SQL statement');
      }
      if (parsed.kind !== 'CreateModel')
        throw invalid(`Not a CREATE MODEL statement: ${query}`, 'Invalid CREATE SQL statement');
      if (parsed.name.project && nameKey(parsed.name.project) !== nameKey(project))
        throw invalid(`The statement names project ${parsed.name.project}, the URL ${project}`);
      try {
        return await createModel(project, parsed);
      } catch (error) {
        if (error instanceof SqlError) throw invalid(error.message);
        throw error;
      }
    },

    /** Training rows: all of them (up to the training limit), as objects. */
    queryRows: async (database: string, query: string) => {
      const integration = await catalog.integration(database);
      if (integration) {
        const result = await (await externals.get(integration)).query(query).catch((error: unknown) => {
          throw externalError(integration, error);
        });
        const names = result.columns.map((c) => c.name);
        return result.rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])));
      }
      checkQuerySize(query);
      const dialect = toDuckDbDialect(trimStatement(query));
      const table = await runSelect(
        ctx.duck,
        catalog,
        prepared,
        externals,
        models,
        { ...dialect, params: {}, db: database, version: ctx.projections.version, dataEpoch },
        {
          ...limits,
          rowLimit: ctx.config.trainRowLimit,
          // Training takes every row it asked for (TRAIN_ROW_LIMIT bounds them), not a cut answer.
          maxAnswerBytes: Number.POSITIVE_INFINITY,
          timeoutMs: ctx.config.sqlTimeoutMs * 10,
        },
      );
      if (table.truncated)
        throw invalid(`The training query returned more than ${ctx.config.trainRowLimit} rows`);
      return table.data.map((r) => Object.fromEntries(table.column_names.map((n, i) => [n, r[i]])));
    },
  };
};

export type SqlService = ReturnType<typeof sqlService>;
