import os from 'node:os';
import path from 'node:path';
import express, { type Express } from 'express';
import { configureEventLimits } from '../events';
import type { Logger } from 'pino';
import swaggerUi from 'swagger-ui-express';
import type { SqlToolPort } from './agentloop';
import { agentRunRoutes } from './agentRuns/routes';
import { agentRunsService } from './agentRuns/service';
import { agentRoutes } from './agents/routes';
import { agentsService } from './agents/service';
import { ledgerRoutes } from './audit/ledgerRoutes';
import { auditRoutes } from './audit/routes';
import { chatbotRoutes } from './chatbots/routes';
import { chatbotsService } from './chatbots/service';
import type { Config } from './config';
import { assertReadModelWritable, ownWritesGate, type AppContext } from './context';
import { externalDatabases } from './databases/pools';
import { databaseRoutes } from './databases/routes';
import { databasesService } from './databases/service';
import { consoleRoutes } from './console/routes';
import { commandRunner } from './eventlog/commands';
import { fileRoutes } from './files/routes';
import { filesService } from './files/service';
import { Api } from './http/api';
import { accessLog } from './http/accessLog';
import { jsonBody } from './http/jsonBody';
import { awaitMinLogPosition, logPositionHeader } from './http/logPosition';
import { errorMapper, notFoundHandler } from './http/problem';
import { registerServerPaths } from './http/serverPaths';
import { createLogger } from './logger';
import { mlEngineRoutes } from './mlEngines/routes';
import { mlEnginesService } from './mlEngines/service';
import { modelRoutes } from './models/routes';
import { modelsService } from './models/service';
import { instanceIdOf, type TrainingRows } from './models/training';
import { jobRoutes } from './jobs/routes';
import { jobScheduler, type JobScheduler } from './jobs/scheduler';
import { jobsService } from './jobs/service';
import { viewRoutes } from './views/routes';
import { integrationWritesService } from './integrationWrites/service';
import { triggersService, type TriggerSource } from './triggers/service';
import { triggerWatcher, type TriggerWatcher } from './triggers/watcher';
import { viewsService, type ViewCheck } from './views/service';
import { knowledgeBaseRoutes } from './knowledgeBases/routes';
import { chatMessageRoutes } from './chatMessages/routes';
import { knowledgeBasesService } from './knowledgeBases/service';
import { projectDirectory } from './projects/directory';
import { projectRoutes } from './projects/routes';
import { projectsService } from './projects/service';
import { readCache, tableReadCaches } from './shared/readCache';
import { skillBody } from './skills/present';
import { skillRoutes } from './skills/routes';
import { skillsService } from './skills/service';
import { jobStatementProblem } from './sql/statementProblem';
import { sqlRoutes } from './sql/routes';
import { mysqlDialectOutsideConnections } from './mysql/oneStatement';
import { sqlService, type SqlService } from './sql/service';
import type { BlobStore } from './storage/blobs';
import { openStores } from './stores';
import { holdsSealedSecrets } from './ledger/sealedLog';
import { secretKeeper } from './ledger/secretKeeper';
import { readingAsOfPosition, withAsOfReads } from './projection/asOfReads';
import { cacheAfterOwnWrites, readsAfterOwnWrites, tableCachesAfterOwnWrites } from './projection/ownWrites';
import { asOfReads } from './http/asOf';
import { systemClock, type Clock } from './shared/time';
import { operationsRoutes } from './system/operations';
import { systemRoutes, VERSION, type ReadModelStatus } from './system/routes';
import { guard, loginLimiters, reenterRequest } from './users/guard';
import { userRoutes } from './users/routes';
import { usersService } from './users/service';
import { withRequest } from './shared/requestContext';
import { chatbotServices, startChatbotWork } from './wiring/chatbots';
import { signedLedger } from './wiring/ledger';
import { operatorView, type OperatorView } from './wiring/operations';

/**
 * The composition root: every capability's service, each given the narrow ports it declares
 * (resolved lazily, so services that answer each other's questions can be built in any order).
 */
export const buildServices = (
  ctx: AppContext,
  blobs: BlobStore,
  training: TrainingRows,
  /** The SQL engine's tools for agents (the SQL service is built from these services: late-bound). */
  agentSql: () => SqlToolPort,
  /** How a view's query is checked: planned by the SQL service (late-bound too). */
  viewCheck: ViewCheck,
  /** The external databases triggers watch (opened after the services: late-bound). */
  triggerSource: () => TriggerSource,
) => {
  const directory = projectDirectory(ctx.duck, ctx.cachedOf('projects'));
  const projects = projectsService(ctx, directory, {
    isIntegration: (name) => databases.isIntegration(name),
  });
  const databases = databasesService(ctx, projects);
  const models = modelsService(ctx, directory, blobs, training, instanceIdOf(ctx.config.dataDir));
  const files = filesService(ctx, blobs);
  const skills = skillsService(ctx, directory, { idOf: (project, ref) => agents.idOf(project, ref) });
  const agents = agentsService(ctx, directory, {
    list: async (project) => (await skills.list(project)).map(skillBody),
    byIds: async (project, ids) => (await skills.byIds(project, ids)).map(skillBody),
  });
  const chatbots = chatbotsService(ctx, directory, {
    agentView: async (project, agentId) => (await agents.byId(project, agentId))?.view ?? null,
    requireIntegration: (ref) => databases.requireIntegration(ref),
  });
  const mlEngines = mlEnginesService(ctx);
  const llmDefaults = {
    openaiBaseUrl: ctx.config.llm.openaiBaseUrl,
    openaiApiKey: ctx.config.llm.openaiApiKey,
    model: ctx.config.llm.model,
    outbound: ctx.config.outbound,
  };
  const knowledgeBases = knowledgeBasesService(ctx, directory, blobs, {
    engines: (name) => mlEngines.settingsOf(name),
    defaults: llmDefaults,
    requestTimeoutMs: ctx.config.llm.requestTimeoutMs,
    // Documents from a query are read like training rows: every row, through the SQL engine.
    rowsOf: (database, query) => training.rows(database, query),
  });
  const agentRuns = agentRunsService(ctx, directory, {
    sql: {
      listTables: (...args) => agentSql().listTables(...args),
      describe: (...args) => agentSql().describe(...args),
      query: (...args) => agentSql().query(...args),
    },
    kb: (project) => ({
      search: async (knowledgeBase, query, { limit, signal }) => {
        const [owner, name] = knowledgeBase.includes('.')
          ? (knowledgeBase.split('.', 2) as [string, string])
          : [project, knowledgeBase];
        const hits = await knowledgeBases.search(owner, name, query, limit, signal);
        return hits.map((h) => ({
          id: h.chunkId,
          content: h.content,
          metadata: { ...h.metadata, document_id: h.id },
          relevance: h.relevance,
        }));
      },
    }),
    engines: (name) => mlEngines.settingsOf(name),
    defaults: llmDefaults,
    requestTimeoutMs: ctx.config.llm.requestTimeoutMs,
  });
  const { chatMessages, chatbotRuntime } = chatbotServices(ctx, { chatbots, databases, agentRuns });
  const users = usersService(ctx, { sessionTtlMs: ctx.config.auth.sessionTtlMs });
  const ledger = signedLedger(ctx);
  const jobs = jobsService(ctx, directory, jobStatementProblem);
  const views = viewsService(ctx, directory, viewCheck);
  const integrationWrites = integrationWritesService(ctx);
  const triggers = triggersService(ctx, directory, triggerSource);
  return {
    users,
    ledger,
    projects,
    databases,
    skills,
    agents,
    chatbots,
    files,
    models,
    mlEngines,
    agentRuns,
    knowledgeBases,
    chatMessages,
    chatbotRuntime,
    jobs,
    views,
    integrationWrites,
    triggers,
  };
};
export type Services = ReturnType<typeof buildServices>;

/** HTTP only: every capability registers its routes on one Api, which also writes the OpenAPI document. */
export const buildHttpApp = (
  ctx: AppContext,
  services: Services,
  sql: SqlService,
  readModel: ReadModelStatus,
  operator: OperatorView,
): { app: Express; api: Api } => {
  // The HTTP endpoint answers MySQL's connection-level look-ups (`SELECT @@version`, SHOW VARIABLES
  // LIKE, SHOW COLUMNS …) with the MySQL door's code, so the two doors agree.
  const sqlOverHttp = mysqlDialectOutsideConnections(
    sql,
    {
      serverVersion: `8.0.17-mindledger-${VERSION}`,
      versionComment: 'mindledger (MindsDB-compatible)',
      port: ctx.config.mysql.port,
      hostname: os.hostname(),
      // The MySQL door always offers TLS (its own certificate without MYSQL_TLS_CERT/KEY).
      tls: true,
      defaultAuthPlugin: 'caching_sha2_password',
      maxAllowedPacket: 64 * 1024 * 1024,
    },
    { user: 'mindsdb', host: 'localhost' },
    'mindsdb',
  );
  const api = new Api();
  // Every capability's routes, in the order the OpenAPI document lists them.
  const mounts: ((api: Api) => void)[] = [
    (a) => systemRoutes(a, readModel, { authEnabled: () => services.users.enabled() }),
    (a) => operationsRoutes(a, operator.routes),
    (a) =>
      userRoutes(a, services.users, {
        secure: ctx.config.auth.secureCookies,
        sessionTtlMs: ctx.config.auth.sessionTtlMs,
      }),
    (a) => auditRoutes(a, ctx.log),
    (a) => ledgerRoutes(a, services.ledger),
    (a) => projectRoutes(a, services.projects),
    (a) => databaseRoutes(a, services.databases),
    (a) => skillRoutes(a, services.skills, services.projects),
    (a) => agentRoutes(a, services.agents, services.projects),
    (a) => agentRunRoutes(a, services.agentRuns),
    (a) => chatbotRoutes(a, services.chatbots, services.projects),
    (a) => knowledgeBaseRoutes(a, services.knowledgeBases, services.projects),
    (a) => jobRoutes(a, services.jobs),
    (a) => viewRoutes(a, services.views),
    (a) =>
      chatMessageRoutes(
        a,
        services.chatMessages,
        services.chatbotRuntime.directory,
        services.chatbotRuntime.channels.inbound,
        {
          streamPollMs: 200,
        },
      ),
    (a) =>
      sqlRoutes(a, {
        execute: async (query, context, params, signal) => {
          const answer = await sqlOverHttp(query, context, params, signal);
          return answer.type === 'ok' ? { ...answer, affected_rows: answer.affected_rows ?? null } : answer;
        },
      }),
    (a) => modelRoutes(a, services.models, services.projects, sql),
    (a) => mlEngineRoutes(a, services.mlEngines),
    (a) =>
      fileRoutes(a, services.files, {
        maxBytes: ctx.config.fileUploadMaxBytes,
        urlUploadEnabled: ctx.config.fileUrlUpload,
        logger: ctx.logger,
        outbound: ctx.config.outbound,
      }),
  ];
  for (const mount of mounts) mount(api);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('strict routing', false);
  if (ctx.config.auth.trustProxy !== undefined) app.set('trust proxy', ctx.config.auth.trustProxy);
  app.use(accessLog(ctx.logger));
  app.use(operator.requests);
  app.use(logPositionHeader);
  // Sign-in, roles, Host check, CSRF, CORS and security headers: before any body is read.
  app.use(guard(services.users, ctx.config.auth));
  app.use(jsonBody({ limit: ctx.config.bodyLimit, maxJsonDepth: ctx.config.maxJsonDepth }));
  app.use(reenterRequest);
  app.use(awaitMinLogPosition(ctx.projections, ctx.config.readMinPositionWaitMs));
  app.use(asOfReads(ctx.duck));
  app.post('/api/login', loginLimiters(ctx.config.auth));
  const document = api.openApiDocument({ title: 'mindledger', version: VERSION });
  app.get('/api/openapi.json', (_req, res) => {
    res.json(document);
  });
  app.use('/doc', swaggerUi.serve, swaggerUi.setup(document));
  app.use(api.router);
  app.use(consoleRoutes());
  app.use(notFoundHandler);
  // Problem details never name this server's directories (DuckDB and Node quote file paths).
  registerServerPaths([ctx.config.dataDir, path.dirname(path.resolve(ctx.config.duckdbFile))]);
  app.use(errorMapper(ctx.logger));
  return { app, api };
};

export type RunningApp = {
  readonly ctx: AppContext;
  readonly services: Services;
  readonly sql: SqlService;
  /** Fires due jobs (every process runs one; a run is claimed through the log). */
  readonly jobs: JobScheduler;
  /** Fires triggers whose source tables gained rows (every process runs one; a firing is claimed through the log). */
  readonly triggers: TriggerWatcher;
  readonly app: Express;
  readonly api: Api;
  close(): Promise<void>;
};

/** Opens the log and the read model, catches the projections up, and wires the HTTP app. */
export const createApp = async (
  config: Config,
  options: { clock?: Clock; logger?: Logger } = {},
): Promise<RunningApp> => {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  configureEventLimits({ maxJsonDepth: config.maxJsonDepth, maxEventBytes: config.maxEventBytes });
  const stores = await openStores(config, logger, clock, { poll: true });
  const { log, duck, blobs, projections, vault } = stores;
  await projections.startServing();
  const commands = commandRunner(log, {
    assertWritable: () => assertReadModelWritable(projections),
    // Other processes write too: the tail keeps cached stream states current instead of a read per write.
    trustCachedStreams: !log.soleWriter,
  });
  // An event holding sealed secrets is re-read unsealed, not evolved from the tail's stored copy.
  projections.onApplied((events) => commands.observe(events, holdsSealedSecrets));
  // Every read waits first for the writes this process answered ahead of its read model (answeredAhead).
  const ownWrites = ownWritesGate(projections, config.readMinPositionWaitMs);
  const tableCaches = tableReadCaches((table) => projections.tableVersion(table), {
    holdsConnection: duck.holdsReader,
    bypass: () => readingAsOfPosition() !== undefined,
  });
  const ctx: AppContext = {
    config,
    secrets: secretKeeper({ commands, log, clock, logger }, vault),
    log,
    // Reads inside a GET …?as_of= see the resource tables as of that position (http/asOf.ts).
    duck: withAsOfReads(readsAfterOwnWrites(duck, ownWrites)),
    projections,
    commands,
    cached: cacheAfterOwnWrites(
      readCache(() => projections.version, {
        holdsConnection: duck.holdsReader,
        bypass: () => readingAsOfPosition() !== undefined,
      }),
      ownWrites,
      'all',
    ),
    cachedOf: tableCachesAfterOwnWrites(tableCaches, ownWrites),
    ownWrites,
    clock,
    logger,
  };
  // Training reads its rows through the SQL service, which is built from the services: late-bound.
  const late: { sql?: SqlService; triggerSource?: TriggerSource } = {};
  const training: TrainingRows = {
    rows: (database: string, query: string) => late.sql!.queryRows(database, query),
  };
  const services = buildServices(
    ctx,
    blobs,
    training,
    () => late.sql!.agentTools,
    (project, name, query) => late.sql!.checkView(project, name, query),
    () => late.triggerSource!,
  );
  // What the service does on its own at start is recorded as the system's doing.
  await withRequest(
    { requestId: 'startup', interface: 'system', actor: { kind: 'system', id: 'startup' } },
    async () => {
      await services.projects.ensureDefault();
      if (config.auth.bootstrap)
        await services.users.bootstrap(config.auth.bootstrap.username, config.auth.bootstrap.password);
    },
  );
  const externals = externalDatabases(ctx, {
    connectTimeoutMs: config.dbConnectTimeoutMs,
    queryTimeoutMs: config.sqlTimeoutMs,
  });
  // Metrics and readiness read the services' work in flight, the runners and the SQL service's reports.
  const operator = operatorView(ctx, {
    trainings: () => services.models.trainingsInFlight(),
    agentRuns: () => services.agentRuns.inFlight(),
  });
  const sql = sqlService(ctx, services, externals, operator.sql);
  late.sql = sql;
  late.triggerSource = {
    integration: async (database) => {
      const found = await services.databases.findIntegration(database);
      return found ? { name: found.name, engine: found.engine ?? '' } : undefined;
    },
    run: async (database, statements, params = []) => {
      const db = await externals.get(database);
      await db.transaction(async (run) => {
        for (const [i, statement] of statements.entries()) await run(statement, params[i] ?? []);
      });
    },
    rows: async (database, query, params) =>
      (await (await externals.get(database)).query(query, params)).rows,
  };
  await sql.install();
  // With the read model stopped at an event it cannot apply, this write waits for the next start.
  await services.models.recoverInterruptedTrainings().catch((err: unknown) => {
    if (!projections.failure) throw err;
    logger.error({ err }, 'interrupted trainings not marked failed: the read model is stopped');
  });
  // Every process answers chatbots' messages (and long-polls Telegram), when configured to.
  const { processor, pollers } = startChatbotWork(ctx, services);
  // Every process fires due jobs; each statement runs through the SQL service, in the job's project.
  const jobs = jobScheduler(
    ctx,
    {
      execute: async (query, project) => {
        const answer = await sql.execute(query, { db: project }, {});
        if (answer.type === 'error') return { outcome: 'error', rows: null, error: answer.error_message };
        if (answer.type === 'table') return { outcome: 'rows', rows: answer.data.length, error: null };
        return { outcome: 'ok', rows: answer.affected_rows ?? null, error: null };
      },
      ownerRights: (owner) => services.users.ownerRights(owner, 'job'),
    },
    config.jobs,
  );
  jobs.start();
  const triggers = triggerWatcher(
    ctx,
    () => late.triggerSource!,
    {
      execute: async (query, project) => {
        const answer = await sql.execute(query, { db: project }, {});
        return answer.type === 'error' ? answer.error_message : null;
      },
      ownerRights: (owner) => services.users.ownerRights(owner, 'trigger'),
    },
    config.triggers,
  );
  triggers.start();
  // The ledger signs checkpoints of the log's hash tree as the log grows (and at a clean stop).
  withRequest({ requestId: 'ledger', interface: 'system', actor: { kind: 'system', id: 'ledger' } }, () =>
    services.ledger.start(),
  );
  const { app, api } = buildHttpApp(
    ctx,
    services,
    sql,
    {
      digest: stores.digest,
      version: () => projections.version,
      failure: () => projections.failure,
      rebuildReason: () => projections.rebuildReason,
      skippedEvents: () => projections.skippedEvents,
    },
    operator,
  );
  return {
    ctx,
    services,
    sql,
    jobs,
    triggers,
    app,
    api,
    close: async () => {
      // Let trainings this process started finish recording (bounded), then stop. The bound's timer
      // is unref'd: left running, it kept a process that had closed everything alive for 10 s.
      await Promise.race([services.models.idle(), new Promise((r) => setTimeout(r, 10_000).unref())]);
      await Promise.all([processor.stop(), pollers.stop(), jobs.stop(), triggers.stop()]);
      await services.ledger.stop();
      await externals.closeAll();
      await stores.close();
    },
  };
};
