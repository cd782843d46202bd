import path from 'node:path';
import express, { type Express } from 'express';
import { configureEventLimits } from '../events';
import type { Logger } from 'pino';
import swaggerUi from 'swagger-ui-express';
import { agentRoutes } from './agents/routes';
import { agentsService } from './agents/service';
import { auditRoutes } from './audit/routes';
import { chatbotRoutes } from './chatbots/routes';
import { chatbotsService } from './chatbots/service';
import type { Config } from './config';
import { assertReadModelWritable, type AppContext } from './context';
import { databaseRoutes } from './databases/routes';
import { databasesService } from './databases/service';
import { commandRunner } from './eventlog/commands';
import { Api } from './http/api';
import { accessLog } from './http/accessLog';
import { jsonBody } from './http/jsonBody';
import { errorMapper, notFoundHandler } from './http/problem';
import { registerServerPaths } from './http/serverPaths';
import type { BlobStore } from './files/blobs';
import { fileRoutes } from './files/routes';
import { externalDatabases } from './integrations/pools';
import { modelRoutes } from './models/routes';
import { instanceIdOf, modelsService, type TrainingRows } from './models/service';
import { filesService } from './files/service';
import { createLogger } from './logger';
import { openStores } from './stores';
import { projectRoutes } from './projects/routes';
import { projectsService } from './projects/service';
import { readCache } from './shared/readCache';
import { skillRoutes } from './skills/routes';
import { sqlRoutes } from './sql/routes';
import { sqlService, type SqlService } from './sql/service';
import { skillsService } from './skills/service';
import { systemClock, type Clock } from './shared/time';
import { systemRoutes, VERSION, type ReadModelStatus } from './system/routes';

export const buildServices = (ctx: AppContext, blobs: BlobStore, training: TrainingRows) => {
  const projects = projectsService(ctx);
  const models = modelsService(ctx, projects, blobs, training, instanceIdOf(ctx.config.dataDir));
  const files = filesService(ctx, blobs);
  const databases = databasesService(ctx, projects);
  const skills = skillsService(ctx, projects);
  const agents = agentsService(ctx, projects, skills);
  const chatbots = chatbotsService(ctx, projects, agents, databases);
  return { projects, databases, skills, agents, chatbots, files, models };
};
export type Services = ReturnType<typeof buildServices>;

/** HTTP only: every capability registers its routes on one Api, which also writes the OpenAPI document. */
export const buildHttpApp = (
  ctx: AppContext,
  services: Services,
  sql: SqlService,
  readModel: ReadModelStatus,
): { app: Express; api: Api } => {
  const api = new Api();
  systemRoutes(api, readModel);
  auditRoutes(api, ctx.log);
  projectRoutes(api, services.projects);
  databaseRoutes(api, services.databases);
  skillRoutes(api, services.skills, services.projects);
  agentRoutes(api, services.agents, services.projects);
  chatbotRoutes(api, services.chatbots, services.projects);
  sqlRoutes(api, sql);
  modelRoutes(api, services.models, services.projects, sql);
  fileRoutes(api, services.files, {
    maxBytes: ctx.config.fileUploadMaxBytes,
    urlUploadEnabled: ctx.config.fileUrlUpload,
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('strict routing', false);
  app.use(accessLog(ctx.logger));
  app.use(jsonBody({ limit: ctx.config.bodyLimit, maxJsonDepth: ctx.config.maxJsonDepth }));
  const document = api.openApiDocument({ title: 'mindledger', version: VERSION });
  app.get('/api/openapi.json', (_req, res) => {
    res.json(document);
  });
  app.use('/doc', swaggerUi.serve, swaggerUi.setup(document));
  app.use(api.router);
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
  const { log, duck, blobs, projections } = stores;
  await projections.startServing();
  const ctx: AppContext = {
    config,
    log,
    duck,
    projections,
    commands: commandRunner(log, { assertWritable: () => assertReadModelWritable(projections) }),
    cached: readCache(() => projections.version, { holdsConnection: duck.holdsReader }),
    clock,
    logger,
  };
  // Training reads its rows through the SQL service, which is built from the services: late-bound.
  const late: { sql?: SqlService } = {};
  const training: TrainingRows = { rows: (database, query) => late.sql!.queryRows(database, query) };
  const services = buildServices(ctx, blobs, training);
  await services.projects.ensureDefault();
  const externals = externalDatabases(ctx, {
    connectTimeoutMs: config.dbConnectTimeoutMs,
    queryTimeoutMs: config.sqlTimeoutMs,
  });
  const sql = sqlService(ctx, services, externals, services.models);
  late.sql = sql;
  await sql.install();
  // With the read model stopped at an event it cannot apply, this write waits for the next start.
  await services.models.recoverInterruptedTrainings().catch((err: unknown) => {
    if (!projections.failure) throw err;
    logger.error({ err }, 'interrupted trainings not marked failed: the read model is stopped');
  });
  const { app, api } = buildHttpApp(ctx, services, sql, {
    digest: stores.digest,
    version: () => projections.version,
    failure: () => projections.failure,
  });
  return {
    ctx,
    services,
    sql,
    app,
    api,
    close: async () => {
      // Let trainings this process started finish recording (bounded), then stop.
      await Promise.race([services.models.idle(), new Promise((r) => setTimeout(r, 10_000))]);
      await externals.closeAll();
      await stores.close();
    },
  };
};
