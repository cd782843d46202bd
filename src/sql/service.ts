import os from 'node:os';
import path from 'node:path';
import type { Externals } from './faces/integration/federation';
import { cutText } from '../integrations/drivers';
import type { AppContext } from '../context';
import { quoteMysqlIdent } from '../shared/quoting';
import { catalogResolver, catalogTables, type CatalogResolver } from './catalog/catalog';
import { configureServerPaths, domainErrorOf, externalError, memoryStopped, SqlError } from './errors';
import { leadingKeyword, trimStatement } from './lexical';
import { preparedCache, type SelectDeps, type SelectLimits } from './pipeline/select';
import { oneChunk } from './pipeline/selectStream';
import { SELECT_LIKE } from './pipeline/selectText';
import { agentSqlPort } from './faces/agent/agentTools';
import type { SqlPorts } from './ports';
import { invalid } from '../shared/errors';
import { introspection } from './catalog/introspection';
import { objectColumnsOf } from './catalog/objectColumns';
import { integrationWritesOf, type SelectAll } from './writes/integrationWrites';
import { fileWritesOf } from './writes/fileWrites';
import type { SqlSlices } from './slicePorts';
import { pipelineStatements } from './statements/tableStatements';
import type { StatementHandlers } from './handlers';
import type { RowTable, SqlAnswer, SqlContext, StreamAnswer } from './answers';
import { currentRequest } from '../shared/requestContext';
import { rolePolicy } from './statements/roles';
import type { TablePolicy } from './pipeline/plan';
import { unobserved, type SqlObserver } from './observer';
import { answerCache, ownWritesApplied } from './pipeline/answerCache';
import {
  checkQuerySize,
  queryReader,
  selectInput,
  tooManyTrainingRows,
  type QueryReader,
} from './pipeline/query';
import { statementDispatcher } from './statements/dispatcher';

/** The endpoint's bounds on one SELECT (SQL_ROW_LIMIT, SQL_TIMEOUT_MS, …), from the configuration. */
const limitsOf = (config: AppContext['config']): SelectLimits => ({
  rowLimit: config.sqlRowLimit,
  timeoutMs: config.sqlTimeoutMs,
  maxListItems: config.sqlMaxListParam,
  maxParams: config.sqlMaxParams,
  maxAnswerBytes: config.sqlMaxAnswerBytes,
  agents: {
    concurrency: config.agentSqlConcurrency,
    maxRows: config.agentSqlMaxRows,
    timeoutMs: config.agentSqlTimeoutMs,
  },
  llm: { timeoutMs: config.llmSql.timeoutMs },
});

/** DuckDB's IO errors name files by absolute path; none of this server's may reach a client. */
const hideServerPaths = (config: AppContext['config']) =>
  configureServerPaths([
    config.dataDir,
    config.duckdbTempDirectory,
    path.dirname(path.resolve(config.duckdbFile)),
    process.cwd(),
    os.tmpdir(),
    os.homedir(),
  ]);

/** What statements' handlers run on: the pipeline's own (SHOW, DESCRIBE, USE, SET, table writes) and the slices'. */
const statementHandlers = <ModelAnswer>(
  ctx: AppContext,
  slices: SqlSlices<ModelAnswer>,
  services: SqlPorts,
  externals: Externals,
  catalog: CatalogResolver,
  query: QueryReader,
  callerPolicy: () => TablePolicy | undefined,
): StatementHandlers => {
  /** A write's rows: the whole answer of its SELECT, read under the caller's policy as its SELECTs are. */
  const selectAll: SelectAll = (sql, db, params) => query.read('write', { sql, db, params });
  return {
    ...slices.statements,
    ...pipelineStatements({
      introspection: introspection({
        internal: (sql, db, deadline, params, placeholders) =>
          query.read('internal', { sql, db, deadline, params, placeholders }),
        services,
        catalog,
        externals,
        policy: callerPolicy,
        settingExists: async (name) =>
          (await ctx.duck.query('SELECT name FROM duckdb_settings() WHERE lower(name) = lower(?)', [name]))
            .length > 0,
      }),
      databaseExists: services.databaseExists,
      integrationWrites: integrationWritesOf({
        catalog,
        externals,
        record: services.recordIntegrationWrite,
        selectAll,
      }),
      fileWrites: fileWritesOf({
        selectAll,
        files: { ...services.files, withReader: (work) => ctx.duck.withReader(work) },
      }),
      knowledgeBaseRows: slices.knowledgeBaseRows,
    }),
  };
};

/** A database's tables as SHOW TABLES answers them (an agent's SQL tool lists them so). */
const tablesShownBy =
  (
    execute: (
      sql: string,
      context: SqlContext,
      params: Record<string, unknown>,
      signal?: AbortSignal,
    ) => Promise<SqlAnswer>,
  ) =>
  async (db: string, signal?: AbortSignal) => {
    const answer = await execute(`SHOW TABLES FROM ${quoteMysqlIdent(db)}`, { db }, {}, signal);
    if (answer.type !== 'table')
      throw new SqlError(
        answer.type === 'error' ? answer.error_code : 1105,
        answer.type === 'error' ? answer.error_message : 'no tables',
      );
    return answer.data.map((row) => String(row[0]));
  };

export const sqlService = <ModelAnswer>(
  ctx: AppContext,
  /** The capabilities' statements and look-ups (src/wiring/sqlSlices.ts): src/sql imports none. */
  slices: SqlSlices<ModelAnswer>,
  services: SqlPorts,
  externals: Externals,
  /** Told of every statement answered and every cache look-up (the operator's metrics). */
  observer: SqlObserver = unobserved,
) => {
  hideServerPaths(ctx.config);
  const limits = limitsOf(ctx.config);
  const tables = catalogTables(slices.catalogs);
  const catalog = catalogResolver(
    {
      ...slices.lookups,
      // information_schema.COLUMNS lists views' and knowledge bases' columns as SELECT * answers them.
      columnsOf: (project, name) =>
        objectColumnsOf(
          select,
          (sql, db) => selectInput(ctx.projections, { sql, placeholders: [] }, db),
          limits,
        )(project, name),
    },
    tables,
  );
  const select: SelectDeps = {
    duck: ctx.duck,
    catalog,
    // A plan is kept per version of the tables its names were resolved from (src/sql/pipeline/planCatalog.ts).
    cache: preparedCache(ctx.projections, observer.cacheLookup),
    externals,
    predictions: services.predictions,
    activityTablesRead: (sql) => {
      const names = tables.namesReadBy(sql);
      return [...ctx.projections.activityTables].filter((table) => names.has(table));
    },
  };
  /** The caller's table policy (and project scope), from its role. */
  const callerPolicy = () => rolePolicy(currentRequest()?.principal);
  /** The external databases' registrations, whose relations alone a read-only caller reads. */
  const registrations = () =>
    ctx.cachedOf('databases')('sql-registrations', () => slices.registrations(ctx.duck));
  const cache = answerCache(ctx, observer);
  const query = queryReader({ ctx, select, catalog, limits, cache, callerPolicy, registrations });
  const handlers = statementHandlers(ctx, slices, services, externals, catalog, query, callerPolicy);
  const statement = statementDispatcher({ ctx, handlers, cache, observer, registrations });

  const execute = (
    sql: string,
    context: SqlContext,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<SqlAnswer> =>
    statement(sql, context, params, signal, (request) => query.read('answer', request));
  /** As `execute`, but a SELECT answered by DuckDB comes as its rows are read (see `streamSelect`). */
  const stream = async (
    sql: string,
    context: SqlContext,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<StreamAnswer> => {
    const answer = await statement(sql, context, params, signal, (request) => query.stream(request));
    return answer.type === 'table' && !('rows' in answer) ? oneChunk(answer, answer.context) : answer;
  };

  return {
    execute,
    stream,
    /** Streamed SELECTs now holding a reader, and chunks read so far. */
    streams: query.streams,
    /** The SQL tools' port for agents (read-only, a skill's tables only, capped). */
    agentTools: agentSqlPort({
      select: (sql, db, options) => query.read('agentTool', { sql, db, ...options }),
      tablesOf: tablesShownBy(execute),
    }),
    install: () => ctx.projections.betweenBatches(() => tables.installCatalog(ctx.duck.writer)),
    ...restReads(ctx, slices, externals, catalog, tables.PROJECT_TABLES, query, execute, callerPolicy),
  };
};

/** What REST requests read through the SQL service: a model's statement, a view's check, a request's rows. */
const restReads = <ModelAnswer>(
  ctx: AppContext,
  slices: SqlSlices<ModelAnswer>,
  externals: Externals,
  catalog: CatalogResolver,
  /** The tables every project has: no view may take their names. */
  projectTables: readonly string[],
  query: QueryReader,
  execute: (sql: string, context: SqlContext, params: Record<string, unknown>) => Promise<SqlAnswer>,
  callerPolicy: () => TablePolicy | undefined,
) => {
  const createModelFromRest = slices.createModelFromText;
  /**
   * Every row a native query reads from an integration (a model's training data, a knowledge base's
   * documents): refused, never cut, past what one read may bring (FETCH_LIMIT rows,
   * FETCH_BYTES of text) or past TRAIN_ROW_LIMIT, as the same read through a SELECT is. Stopped, its
   * read with it, when the memory watch stops the queries that grew the heap.
   */
  const readWholeFromIntegration = async (integration: string, sql: string): Promise<RowTable> => {
    const { trainRowLimit } = ctx.config;
    const stop = new AbortController();
    const stopWatching = ctx.duck.onMemoryPressure((pressure) => stop.abort(memoryStopped(pressure)));
    try {
      const result = await (
        await externals.get(integration)
      )
        // The driver stops one row past TRAIN_ROW_LIMIT: the database sends no more than is used.
        .query(sql, [], { signal: stop.signal, rows: trainRowLimit })
        .catch((error: unknown) => {
          throw stop.signal.aborted ? stop.signal.reason : externalError(integration, error);
        });
      if (result.cut?.by === 'rows' && result.cut.limit === trainRowLimit)
        throw tooManyTrainingRows(trainRowLimit);
      if (result.cut)
        throw invalid(
          `The query sent to ${integration} returned more than ${cutText(result.cut)}, more than one read from a database may bring; filter it, or read a sample`,
        );
      return { names: result.columns.map((c) => c.name), rows: result.rows };
    } finally {
      stopWatching();
    }
  };
  /**
   * An answer's column names with its first ones named by `columns` (an INSERT's column list), as a
   * derived table's column list names them (`AS t(a, b)`); more names than columns is refused.
   */
  const namedFirst = (names: readonly string[], columns: readonly string[]) => {
    if (columns.length > names.length)
      throw invalid(`The column list names ${columns.length} columns and its query answers ${names.length}`);
    return names.map((n, i) => columns[i] ?? n);
  };
  const queryRowsAsCaller = async (
    database: string,
    sql: string,
    policy: TablePolicy | undefined,
  ): Promise<RowTable> => {
    await ownWritesApplied(ctx);
    const integration = await catalog.integration(database);
    if (integration) {
      policy?.check(integration, '(native query)');
      return readWholeFromIntegration(integration, sql);
    }
    // Training takes every row it asked for (TRAIN_ROW_LIMIT bounds them), not a cut answer.
    const table = await query.read('training', { sql, db: database, policy });
    return { names: table.column_names, rows: table.data };
  };
  const queryTable = (database: string, sql: string): Promise<RowTable> =>
    queryRowsAsCaller(database, sql, callerPolicy()).catch((error: unknown) => {
      throw domainErrorOf(error);
    });
  return {
    /** POST /api/projects/{p}/models: the body's statement must be a CREATE MODEL. */
    createModelFromRest: (project: string, sql: string) => {
      try {
        checkQuerySize(sql, ctx.config.sqlMaxQueryBytes);
      } catch (error) {
        throw invalid((error as Error).message);
      }
      return createModelFromRest(project, sql);
    },

    /**
     * Why a view's name or query would not do, or null: a name of the project's own tables, a query
     * that is not one SELECT, or one that does not plan (unknown tables, columns). The query runs with
     * LIMIT 0, so nothing is read but the shape.
     */
    checkView: async (project: string, name: string, sql: string): Promise<string | null> => {
      if (projectTables.some((t) => t === name.toLowerCase()))
        return `${name} is the name of a table every project has`;
      const trimmed = trimStatement(sql);
      if (!SELECT_LIKE.has(leadingKeyword(trimmed))) return 'the query of a view must be a SELECT';
      const answer = await execute(`SELECT * FROM (${trimmed}) AS __view LIMIT 0`, { db: project }, {});
      return answer.type === 'error' ? answer.error_message : null;
    },

    /**
     * Every row a request's query reads (a model's training data, a knowledge base's documents),
     * as the caller's own SELECT may read them (a project-scoped token stays in its project); a
     * SQL error is the request's problem (403, 404, 400, …).
     */
    queryRows: async (database: string, sql: string, columns: readonly string[] = []) => {
      const { names, rows } = await queryTable(database, sql);
      const named = namedFirst(names, columns);
      return rows.map((r) => Object.fromEntries(named.map((n, i) => [n, r[i]])));
    },
    /**
     * The same rows as `queryRows`, as arrays beside the column names: a training's million rows
     * are not made objects (942 ms of one turn of the event loop for 1M rows of 10 columns).
     */
    queryTable,
    /**
     * Refuses what `queryRows` would refuse this caller, reading nothing: for work that reads
     * later (a training), refused before it is recorded. A caller without limits is not asked.
     */
    readable: async (database: string, sql: string) => {
      const policy = callerPolicy();
      if (!policy) return;
      const integration = await catalog.integration(database);
      if (integration) return policy.check(integration, '(native query)');
      await queryRowsAsCaller(
        database,
        `SELECT * FROM (${trimStatement(sql)}) AS readable LIMIT 0`,
        policy,
      ).catch((error: unknown) => {
        throw domainErrorOf(error);
      });
    },
  };
};

export type SqlService<ModelAnswer = unknown> = ReturnType<typeof sqlService<ModelAnswer>>;
