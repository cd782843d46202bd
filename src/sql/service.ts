import os from 'node:os';
import path from 'node:path';
import type { AppContext } from '../context';
import { quoteMysqlIdent } from '../shared/quoting';
import {
  catalogResolver,
  INFORMATION_SCHEMA_TABLES,
  installCatalog,
  namesReadBy,
  PROJECT_TABLES,
} from './catalog';
import {
  configureServerPaths,
  domainErrorOf,
  externalError,
  SqlError,
  SqlErrorCode,
  toSqlError,
} from './errors';
import { unsupportedStatement } from './unsupported';
import { leadingKeyword, quoteModelVersions, toDuckDbDialect, trimStatement } from './lexical';
import { isSyntaxProblem, parseMindsStatement } from './parse';
import { tooManyParameters } from './parameters';
import { activityTablesReadBy } from './statementCache';
import {
  isReusableAnswer,
  preparedCache,
  runSelect,
  type Predictions,
  type SelectDeps,
  type SelectInput,
  type SelectLimits,
} from './select';
import { oneChunk, streamCounters, streamSelect } from './selectStream';
import { FORBIDDEN, SELECT_LIKE, selectText } from './selectText';
import { agentSqlPort, type ScopedSqlEngine } from './agentTools';
import type { ExternalDatabases } from '../databases/pools';
import type { SqlPorts } from './ports';
import { invalid } from '../shared/errors';
import { introspection } from './introspection';
import { objectColumnsOf } from './objectColumns';
import { integrationWritesOf, type SelectAll } from './integrationWrites';
import { fileWritesOf } from './fileWrites';
import { modelSqlPorts, sliceLookups, sliceStatements } from './slices';
import { pipelineStatements } from './tableStatements';
import type { StatementContext, StatementHandlers, StatementKindName, StatementOf } from './handlers';
import { createModelFromText } from '../models/sql';
import { knowledgeBaseRows } from '../knowledgeBases/sql';
import type {
  ErrorAnswer,
  OkAnswer,
  SqlAnswer,
  SqlContext,
  StreamAnswer,
  TableAnswer,
  TableRows,
} from './answers';
import { deadlineIn, withinDeadline, type Deadline } from './deadline';
import { StampedCache } from '../shared/stampedCache';
import { currentRequest } from '../shared/requestContext';
import { writtenLabels } from '../shared/sqlLabels';
import {
  callerPolicyOf,
  checkStatement,
  registrationsOf,
  rolePolicy,
  withRegisteredRelations,
} from './roles';
import type { TablePolicy } from './plan';
import { statementKindOf, unobserved, type SqlObserver, type StatementKind } from './observer';
import { llmFunctionAnswers, llmModelAnswers } from './llmAnswers';

export type { SqlAnswer, SqlContext, StreamAnswer } from './answers';

const DEFAULT_DB = 'mindsdb';

export const sqlService = (
  ctx: AppContext,
  services: SqlPorts,
  externals: ExternalDatabases,
  /** Told of every statement answered and every cache look-up (the operator's metrics). */
  observer: SqlObserver = unobserved,
) => {
  const catalog = catalogResolver({
    ...sliceLookups(services),
    // information_schema.COLUMNS lists views' and knowledge bases' columns as SELECT * answers them.
    columnsOf: (project, name) =>
      objectColumnsOf(deps, (sql, db) => inputOf({ sql, placeholders: [] }, db), limits)(project, name),
  });
  // Models queried as tables predict; agents queried as tables answer (each answer a run of its
  // own, outside the reader the query holds: an agent's tools read through readers of their own).
  const models: Predictions = {
    predictor: (project, name) => services.models.predictor(project, name),
    ask: (project, agent, question, signal) =>
      ctx.duck.detached(() =>
        services.agentRuns.complete(
          { project, agent, messages: [{ question }], via: 'sql' },
          { signal, waitForRecord: true },
        ),
      ),
    // A question's embedding may come from a provider: asked outside the reader the query holds.
    knowledgeBase: (project, name, question, signal) =>
      ctx.duck.detached(() => services.knowledgeBases.source(project, name, question, signal)),
    llmModel: (project, name) => llmModelAnswers(ctx, services, project, name),
    llmFunction: (prompts, project, signal) => llmFunctionAnswers(ctx, services)(prompts, project, signal),
  };
  // A plan reads the resource tables only (names resolved, views expanded): activity does not move it.
  const prepared = preparedCache(() => ctx.projections.resourceVersion, observer.cacheLookup);
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
    maxParams: ctx.config.sqlMaxParams,
    maxAnswerBytes: ctx.config.sqlMaxAnswerBytes,
    agents: {
      concurrency: ctx.config.agentSqlConcurrency,
      maxRows: ctx.config.agentSqlMaxRows,
      timeoutMs: ctx.config.agentSqlTimeoutMs,
    },
    llm: { timeoutMs: ctx.config.llmSql.timeoutMs },
  };
  const deps: SelectDeps = {
    duck: ctx.duck,
    catalog,
    cache: prepared,
    externals,
    predictions: models,
    activityTablesRead: (sql) => {
      const names = namesReadBy(sql);
      return [...ctx.projections.activityTables].filter((table) => names.has(table));
    },
  };
  /** A query's input as `runSelect` takes it, read at the projections' current version. */
  const inputOf = (
    text: {
      sql: string;
      placeholders: string[];
      positional?: number;
      natives?: SelectInput['natives'];
      predictOptions?: SelectInput['predictOptions'];
    },
    db: string,
    params: Record<string, unknown> = {},
  ): SelectInput => ({
    ...text,
    params,
    db,
    version: ctx.projections.resourceVersion,
    dataEpoch: () => ctx.projections.dataEpoch,
  });

  /**
   * The one cache of answers (metrics label `answer`), each for the stamp of the tables it read
   * (src/projection/readVersions.ts): until a batch changes a resource table or an activity table
   * the query reads, the same query gives the same answer (for what `isReusableAnswer` admits,
   * src/sql/statementCache.ts: deterministic local queries, read under no table policy, of at most
   * MAX_CACHED_ROWS rows and MAX_CACHED_BYTES bytes). Each answer is kept for the stamps read
   * before its query started (`set` refuses it if they moved since), under two keys:
   *   - its text as the client sent it, database and parameters (`answerKey`): a repeated SELECT
   *     (a dashboard polling, over HTTP or MySQL) skips even the rewriting and takes no reader;
   *   - its text as rewritten for DuckDB (`rewrittenKey`: comments, MySQL's quoting and blanks
   *     around it gone), with the database and the parameters it binds: the same query in another
   *     text (a comment naming the request), or sent a parameter it does not use, skips planning
   *     and DuckDB. SHOW's and DESCRIBE's SELECTs (`internal`) are kept by it too.
   * A caller under a role's policy neither reads nor fills it: a cached answer was someone else's.
   * Rows read with other limits (training, INSERT … SELECT, agents' tools) are neither.
   * Below it nothing holds answers, only work: the plan cache (`prepared.queries`, label
   * `statement`, per version of the resource tables: SELECTs parsed, resolved and planned, src/sql/select.ts) and DuckDB's
   * prepared statements (`readDeterministic`, src/sql/statementCache.ts: per pooled connection and
   * data epoch); a SELECT that misses here is read by DuckDB.
   * 700 entries: the 500 and 200 of the two answer caches this one replaced (issue 38).
   */
  const answers = new StampedCache<TableAnswer>((reads) => ctx.projections.readStamp(reads), 700);
  const answerKey = (sql: string, db: string, params: Record<string, unknown>) =>
    `${db}\u0000${sql}\u0000${JSON.stringify(params)}`;
  const rewrittenKey = (
    db: string,
    text: Pick<SelectInput, 'sql' | 'placeholders' | 'positional' | 'natives' | 'predictOptions'>,
    params: Record<string, unknown>,
  ): string | undefined => {
    // Everything of the rewritten text `runSelect` reads (see `inputOf`), and the parameters its
    // placeholders bind (`bindParameters` reads no other: one sent but unused changes nothing);
    // none for values JSON cannot spell (a BigInt), which are read afresh. Blanks around the
    // statement (where a closing comment was) change nothing it answers either.
    const bound = [...new Set(text.placeholders)].map((name) =>
      !(name in params) ? 'missing' : params[name] === undefined ? 'undefined' : [params[name]],
    );
    try {
      return `\u0001${db}\u0000${text.sql.trim()}\u0000${JSON.stringify([
        text.placeholders,
        text.positional ?? 0,
        [...(text.natives ?? [])],
        text.predictOptions ?? null,
        bound,
      ])}`;
    } catch {
      return undefined;
    }
  };
  /** The answer kept under the rewritten text's key (counted: the look-up a SELECT's hit or miss is). */
  const knownRewritten = (key: string | undefined) => {
    if (key === undefined) return undefined;
    const known = answers.get(key);
    observer.cacheLookup('answer', known !== undefined);
    return known;
  };
  /** Keeps a reusable answer under each of its keys, for the tables' stamps when its read began. */
  const keep = (
    answer: TableAnswer,
    stampsThen: (reads: readonly string[]) => string,
    ...keys: (string | undefined)[]
  ) => {
    if (!isReusableAnswer(answer)) return;
    const reads = activityTablesReadBy(answer);
    for (const key of keys) if (key !== undefined) answers.set(key, answer, reads, stampsThen);
  };
  /**
   * The answer kept under `key` once this process's writes answered ahead to what it read are
   * applied (read-your-writes), if they left it as it was. It waits for writes to the resource
   * tables and to the activity tables it read, not for others' (an MCP call's own record).
   */
  const knownAfterOwnWrites = async (key: string): Promise<TableAnswer | undefined> => {
    const entry = answers.entry(key);
    if (!entry) return undefined;
    const waiting = ctx.ownWrites({ allBut: activityTablesNotIn(entry.reads) });
    if (!waiting) return entry.value;
    await waiting;
    return answers.get(key);
  };
  /** Per answer's reads (one array per answer), the activity tables it did not read: made once. */
  const unread = new WeakMap<readonly string[], ReadonlySet<string>>();
  const activityTablesNotIn = (reads: readonly string[]) => {
    let tables = unread.get(reads);
    if (!tables)
      unread.set(
        reads,
        (tables = new Set([...ctx.projections.activityTables].filter((table) => !reads.includes(table)))),
      );
    return tables;
  };
  /** Every write this process answered before the statement is applied (read-your-writes). */
  const ownWritesApplied = async () => {
    const waiting = ctx.ownWrites('all');
    if (waiting) await waiting;
  };
  type Select<T> = (
    sql: string,
    db: string,
    params: Record<string, unknown>,
    deadline: Deadline,
    signal?: AbortSignal,
    policy?: TablePolicy,
  ) => Promise<T>;
  /**
   * A client's SELECT (MySQL dialect, MindsDB names) read as the endpoint reads every one: its text
   * made the engine's (`selectText`: native queries, model versions, joins with models and agents, a
   * closing USING), then planned and read (`runSelect`). SELECTs answered and SELECTs whose rows a
   * write stores or a model trains on all come through here, so each reads what the others would.
   */
  const readSelect = async (
    sql: string,
    db: string,
    params: Record<string, unknown>,
    options: SelectLimits & { deadline: Deadline },
  ) => runSelect(deps, inputOf(await selectText(catalog, sql, db, options.deadline), db, params), options);
  /**
   * A client's SELECT rewritten for DuckDB, with its two cache keys (none under a policy) and the
   * answer the rewritten text's key holds (also kept then under the text as sent).
   */
  const rewrittenSelect = async (
    sql: string,
    db: string,
    params: Record<string, unknown>,
    deadline: Deadline,
    policy: TablePolicy | undefined,
  ) => {
    const stamps = ctx.projections.readStampsNow();
    const key = policy ? undefined : answerKey(sql, db, params);
    const text = await selectText(catalog, sql, db, deadline);
    const rewritten = policy ? undefined : rewrittenKey(db, text, params);
    const known = knownRewritten(rewritten);
    if (known) keep(known, stamps, key);
    return { text, known, keepRead: (answer: TableAnswer) => keep(answer, stamps, key, rewritten) };
  };
  const select: Select<TableAnswer> = async (sql, db, params, deadline, signal, policy) => {
    const { text, known, keepRead } = await rewrittenSelect(sql, db, params, deadline, policy);
    if (known) return known;
    const answer = await runSelect(deps, inputOf(text, db, params), { ...limits, deadline, signal, policy });
    keepRead(answer);
    return answer;
  };
  /**
   * Every row of a SELECT (up to TRAIN_ROW_LIMIT, as training reads), not an answer cut at
   * SQL_ROW_LIMIT or SQL_MAX_ANSWER_BYTES; `truncated` when there were more.
   */
  const everyRow = (query: string, db: string, params: Record<string, unknown>, policy?: TablePolicy) => {
    checkQuerySize(query);
    const timeoutMs = ctx.config.sqlTimeoutMs * 10;
    return readSelect(trimStatement(query), db, params, {
      ...limits,
      rowLimit: ctx.config.trainRowLimit,
      maxAnswerBytes: Number.POSITIVE_INFINITY,
      timeoutMs,
      deadline: deadlineIn(timeoutMs),
      policy,
    });
  };
  /** Streamed SELECTs: what they hold now (see `StreamCounters`). */
  const streams = streamCounters();
  const selectRows: Select<TableRows> = async (sql, db, params, deadline, signal, policy) => {
    const { text, known, keepRead } = await rewrittenSelect(sql, db, params, deadline, policy);
    if (known) return oneChunk(known);
    return streamSelect(
      deps,
      inputOf(text, db, params),
      { ...limits, deadline, signal, policy },
      streams,
      keepRead,
    );
  };
  /** The caller's table policy (and project scope), from its role. */
  const callerPolicy = () => rolePolicy(currentRequest()?.principal);
  /** The external databases' registrations, whose relations alone a read-only caller reads. */
  const registrations = () => ctx.cachedOf('databases')('sql-registrations', () => registrationsOf(ctx.duck));
  /**
   * Our own SQL (already DuckDB dialect, MindsDB names) wrapped around a client's WHERE/LIKE: read
   * under the caller's policy, so SHOW and DESCRIBE answer what its SELECTs would.
   */
  const internal = async (
    sql: string,
    db: string,
    deadline: Deadline,
    params: Record<string, unknown> = {},
    placeholders: string[] = [],
  ) => {
    const stamps = ctx.projections.readStampsNow();
    const policy = callerPolicy();
    const rewritten = policy ? undefined : rewrittenKey(db, { sql, placeholders }, params);
    const known = knownRewritten(rewritten);
    if (known) return known;
    const answer = await runSelect(deps, inputOf({ sql, placeholders }, db, params), {
      ...limits,
      deadline,
      policy,
    });
    keep(answer, stamps, rewritten);
    return answer;
  };

  /** An agent's SQL tool: one SELECT (MySQL dialect, no native queries) under a table policy. */
  const scopedSelect: ScopedSqlEngine['select'] = async (sql, db, options) => {
    checkQuerySize(sql);
    const deadline = deadlineIn(ctx.config.sqlTimeoutMs);
    const converted = toDuckDbDialect(sql);
    converted.sql = quoteModelVersions(converted.sql);
    return withinDeadline(
      runSelect(deps, inputOf(converted, db), {
        ...limits,
        rowLimit: options.rowLimit,
        deadline,
        signal: options.signal,
        policy: withRegisteredRelations(options.policy, await registrations()),
      }),
      deadline,
    );
  };
  const agentTools = agentSqlPort({
    select: scopedSelect,
    tablesOf: async (db, signal) => {
      const answer = await execute(`SHOW TABLES FROM ${quoteMysqlIdent(db)}`, { db }, {}, signal);
      if (answer.type !== 'table')
        throw new SqlError(
          answer.type === 'error' ? answer.error_code : 1105,
          answer.type === 'error' ? answer.error_message : 'no tables',
        );
      return answer.data.map((row) => String(row[0]));
    },
  });

  /** A write's rows: the whole answer of its SELECT, read under the caller's policy as its SELECTs are. */
  const selectAll: SelectAll = async (query, db, params) => {
    const table = await everyRow(query, db, params, callerPolicy());
    if (table.truncated)
      throw new SqlError(
        SqlErrorCode.TooLarge,
        `The query returned more than ${ctx.config.trainRowLimit} rows (TRAIN_ROW_LIMIT)`,
      );
    return table;
  };
  const integrationWrites = integrationWritesOf({
    catalog,
    externals,
    record: (write) => services.integrationWrites.record(write),
    selectAll,
  });
  const fileWrites = fileWritesOf({
    selectAll,
    files: {
      digestOf: (name) => services.files.digestOf(name),
      tempPath: () => services.files.tempPath(),
      register: (name, path, originalName, expected) =>
        services.files.register(name, path, originalName, expected),
      withReader: (work) => ctx.duck.withReader(work),
    },
  });
  const introspected = introspection({
    internal,
    services,
    catalog,
    externals,
    policy: callerPolicy,
    settingExists: async (name) =>
      (await ctx.duck.query('SELECT name FROM duckdb_settings() WHERE lower(name) = lower(?)', [name]))
        .length > 0,
  });

  /** Every statement kind the grammar makes, and what runs it: complete by type. */
  const handlers: StatementHandlers = {
    ...sliceStatements(services),
    ...pipelineStatements({
      introspection: introspected,
      databaseExists: (name) => services.databases.exists(name),
      integrationWrites,
      fileWrites,
      knowledgeBaseRows: knowledgeBaseRows(services.knowledgeBases),
    }),
  };
  /** A statement to its kind's handler (the map's type ties each kind to its statement's shape). */
  const dispatch = <K extends StatementKindName>(
    kind: K,
    statement: StatementOf<K>,
    context: StatementContext,
  ) => handlers[kind](statement, context);
  const createModelFromRest = createModelFromText(modelSqlPorts(services));

  /** One statement; its SELECTs read through `selecting` (whole, or streamed). Never throws. */
  const statement = async <T extends { type: 'table'; column_names: string[] }>(
    query: string,
    context: SqlContext,
    params: Record<string, unknown>,
    signal: AbortSignal | undefined,
    selecting: Select<T>,
  ): Promise<(T | TableAnswer | OkAnswer | ErrorAnswer) & { context: SqlContext }> => {
    // SQL_TIMEOUT_MS counts from here: rewriting, name resolution, fetches and DuckDB's work.
    const deadline = deadlineIn(ctx.config.sqlTimeoutMs);
    const started = performance.now();
    let db = typeof context.db === 'string' && context.db ? context.db : DEFAULT_DB;
    /** What the statement is, once known (metrics and logs name it; they never quote its text). */
    let kind: StatementKind = 'invalid';
    const answer = async (): Promise<T | TableAnswer | OkAnswer> => {
      checkQuerySize(query);
      // Before the answer cache's key is made of them, or anything else reads them.
      const sent = Object.keys(params).length;
      if (sent > ctx.config.sqlMaxParams)
        throw tooManyParameters(`is sent ${sent} parameters`, ctx.config.sqlMaxParams);
      const sql = trimStatement(query);
      if (!sql) throw new SqlError(SqlErrorCode.Syntax, 'The query is empty');
      const keyword = leadingKeyword(sql);
      const principal = currentRequest()?.principal;
      if (SELECT_LIKE.has(keyword)) {
        kind = 'select';
        const policy = await callerPolicyOf(principal, registrations);
        // An answer in hand is given at once (no deadline timer), once this process's writes to what
        // it read are applied; `selecting` reads and fills the cache (a caller under a role's policy
        // neither). A miss by text is counted by `selecting`, once it has looked by the rewritten text.
        const known = policy ? undefined : await knownAfterOwnWrites(answerKey(sql, db, params));
        if (known) observer.cacheLookup('answer', true);
        else await ownWritesApplied();
        const table =
          known ?? (await withinDeadline(selecting(sql, db, params, deadline, signal, policy), deadline));
        // Labelled as MySQL labels them (src/sql/labels.ts), whichever door asked.
        return { ...table, column_names: writtenLabels(sql, table.column_names) };
      }
      await ownWritesApplied();
      const unsupported = unsupportedStatement(sql);
      if (unsupported) {
        kind = 'forbidden';
        throw unsupported;
      }
      if (FORBIDDEN.has(keyword)) {
        kind = 'forbidden';
        throw new SqlError(
          SqlErrorCode.Forbidden,
          `${keyword} is not allowed: the tables are projections of the event log and change only through commands`,
        );
      }
      const parsed = parseMindsStatement(sql);
      if (isSyntaxProblem(parsed)) {
        if (
          ['UPDATE', 'DROP', 'ALTER', 'CREATE', 'INSERT', 'DELETE'].includes(keyword) &&
          !/\b(PROJECT|DATABASE|SCHEMA|SKILL|AGENT|CHATBOT|KNOWLEDGE|JOB|VIEW|TRIGGER)\b/i.test(
            sql.slice(0, 40),
          )
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
      kind = statementKindOf(parsed.kind);
      checkStatement(principal, parsed.kind);
      const context: StatementContext = {
        db,
        sql,
        params,
        deadline,
        use: (database) => {
          db = database;
        },
      };
      return dispatch(parsed.kind, parsed, context);
    };
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = await answer();
      observer.answered({ kind, outcome: result.type === 'ok' ? 'ok' : 'table', seconds: seconds() });
      return { ...result, context: { ...context, db } };
    } catch (error) {
      const e = toSqlError(error);
      observer.answered({ kind, outcome: 'error', seconds: seconds(), errorCode: e.code });
      logSqlError(kind, e.code, error);
      return { type: 'error', error_code: e.code, error_message: e.message, context: { ...context, db } };
    }
  };
  /**
   * One line per failed statement, with the request id: its kind and error code only. Messages
   * quote what the client wrote (a literal, a name, a password in a USING clause), so they are not
   * logged; an internal error (our bug) keeps the error itself, which the operator needs.
   */
  const logSqlError = (kind: StatementKind, code: number, error: unknown) => {
    const request = currentRequest();
    const fields = { reqId: request?.requestId, via: request?.interface, statement: kind, sqlError: code };
    if (code === SqlErrorCode.Internal) ctx.logger.error({ ...fields, err: error }, 'SQL statement failed');
    else ctx.logger.info(fields, 'SQL statement failed');
  };
  const execute = (
    query: string,
    context: SqlContext,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<SqlAnswer> => statement(query, context, params, signal, select);
  /** As `execute`, but a SELECT answered by DuckDB comes as its rows are read (see `streamSelect`). */
  const stream = async (
    query: string,
    context: SqlContext,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<StreamAnswer> => {
    const answer = await statement(query, context, params, signal, selectRows);
    return answer.type === 'table' && !('rows' in answer) ? oneChunk(answer, answer.context) : answer;
  };

  const queryRowsAsCaller = async (database: string, query: string, policy: TablePolicy | undefined) => {
    await ownWritesApplied();
    const integration = await catalog.integration(database);
    if (integration) {
      policy?.check(integration, '(native query)');
      const result = await (await externals.get(integration)).query(query).catch((error: unknown) => {
        throw externalError(integration, error);
      });
      const names = result.columns.map((c) => c.name);
      return result.rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])));
    }
    // Training takes every row it asked for (TRAIN_ROW_LIMIT bounds them), not a cut answer.
    const table = await everyRow(query, database, {}, policy);
    if (table.truncated)
      throw invalid(`The training query returned more than ${ctx.config.trainRowLimit} rows`);
    return table.data.map((r) => Object.fromEntries(table.column_names.map((n, i) => [n, r[i]])));
  };

  return {
    execute,
    stream,
    /** Streamed SELECTs now holding a reader, and chunks read so far. */
    streams: streams as Readonly<typeof streams>,
    /** The SQL tools' port for agents (read-only, a skill's tables only, capped). */
    agentTools,
    install: () => ctx.projections.betweenBatches(() => installCatalog(ctx.duck.writer)),
    tables: { INFORMATION_SCHEMA_TABLES, PROJECT_TABLES },

    /** POST /api/projects/{p}/models: the body's statement must be a CREATE MODEL. */
    createModelFromRest: (project: string, query: string) => {
      try {
        checkQuerySize(query);
      } catch (error) {
        throw invalid((error as Error).message);
      }
      return createModelFromRest(project, query);
    },

    /**
     * Why a view's name or query would not do, or null: a name of the project's own tables, a query
     * that is not one SELECT, or one that does not plan (unknown tables, columns). The query runs with
     * LIMIT 0, so nothing is read but the shape.
     */
    checkView: async (project: string, name: string, query: string): Promise<string | null> => {
      if (PROJECT_TABLES.some((t) => t === name.toLowerCase()))
        return `${name} is the name of a table every project has`;
      const sql = trimStatement(query);
      if (!SELECT_LIKE.has(leadingKeyword(sql))) return 'the query of a view must be a SELECT';
      const answer = await execute(`SELECT * FROM (${sql}) AS __view LIMIT 0`, { db: project }, {});
      return answer.type === 'error' ? answer.error_message : null;
    },

    /** Training rows: all of them (up to the training limit), as objects. */
    /**
     * Every row a request's query reads (a model's training data, a knowledge base's documents),
     * as the caller's own SELECT may read them (a project-scoped token stays in its project); a
     * SQL error is the request's problem (403, 404, 400, …).
     */
    queryRows: async (database: string, query: string) =>
      queryRowsAsCaller(database, query, callerPolicy()).catch((error: unknown) => {
        throw domainErrorOf(error);
      }),
    /**
     * Refuses what `queryRows` would refuse this caller, reading nothing: for work that reads
     * later (a training), refused before it is recorded. A caller without limits is not asked.
     */
    readable: async (database: string, query: string) => {
      const policy = callerPolicy();
      if (!policy) return;
      const integration = await catalog.integration(database);
      if (integration) return policy.check(integration, '(native query)');
      await queryRowsAsCaller(
        database,
        `SELECT * FROM (${trimStatement(query)}) AS readable LIMIT 0`,
        policy,
      ).catch((error: unknown) => {
        throw domainErrorOf(error);
      });
    },
  };
};

export type SqlService = ReturnType<typeof sqlService>;
