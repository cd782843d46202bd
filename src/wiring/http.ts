import os from 'node:os';
import path from 'node:path';
import express, { type Express, type RequestHandler } from 'express';
import swaggerUi from 'swagger-ui-express';
import { agentRunRoutes } from '../agentRuns/routes';
import { agentRunReplayRoutes } from '../agentRuns/replayRoutes';
import { agentEvaluationRoutes } from '../agents/evaluationRoutes';
import { agentRoutes } from '../agents/routes';
import { ledgerRoutes } from '../audit/ledgerRoutes';
import { auditRoutes } from '../audit/routes';
import { chatbotRoutes } from '../chatbots/routes';
import type { AppContext } from '../context';
import { databaseRoutes } from '../databases/routes';
import { consoleRoutes } from '../console/routes';
import { fileRoutes } from '../files/routes';
import { Api } from '../http/api';
import { accessLog } from '../http/accessLog';
import { jsonBody } from '../http/jsonBody';
import { awaitMinLogPosition, logPositionHeader } from '../http/logPosition';
import { errorMapper, notFoundHandler } from '../http/problem';
import { registerServerPaths } from '../http/serverPaths';
import { mlEngineRoutes } from '../mlEngines/routes';
import { llmBudgetRoutes } from '../llmBudgets/routes';
import { modelRoutes } from '../models/routes';
import { jobRoutes } from '../jobs/routes';
import { viewRoutes } from '../views/routes';
import { knowledgeBaseRoutes } from '../knowledgeBases/routes';
import { knowledgeBaseEvaluationRoutes } from '../knowledgeBases/evaluationRoutes';
import { chatMessageRoutes } from '../chatMessages/routes';
import { projectRoutes } from '../projects/routes';
import { skillRoutes } from '../skills/routes';
import { sqlRoutes, type SqlPort } from '../sql/routes';
import { speaking } from '../doorway/dialect';
import { mysqlDialect } from '../mysql';
import type { SqlService } from '../sql/service';
import type { ModelView } from '../models/present';
import { asOfReads } from '../http/asOf';
import { operationsRoutes } from '../system/operations';
import { systemRoutes, VERSION, type ReadModelStatus } from '../system/routes';
import { guard, loginLimiters, reenterRequest } from '../users/guard';
import { userRoutes } from '../users/routes';
import type { OperatorView } from './operations';
import type { Services } from './services';
import { mcpPorts } from './mcp';
import { mcpRoutes } from '../mcp/routes';
import { a2aPorts } from './a2a';
import { a2aRoutes } from '../a2a/routes';

/** HTTP only: every capability registers its routes on one Api, which also writes the OpenAPI document. */
export const buildHttpApp = (
  ctx: AppContext,
  services: Services,
  sql: SqlService<ModelView>,
  readModel: ReadModelStatus,
  operator: OperatorView,
): { app: Express; api: Api; close: () => void } => {
  // The HTTP endpoint speaks MySQL's dialect (MindsDB's): its connection-level look-ups (`SELECT
  // @@version`, SHOW VARIABLES LIKE, SHOW COLUMNS …) are answered with the MySQL door's code, so the
  // two doors agree, and the engine answers only what both doors give it.
  const sqlOverHttp = speaking(
    sql,
    mysqlDialect(
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
    ),
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
    (a) => agentRunReplayRoutes(a, services.agentRuns),
    (a) => agentEvaluationRoutes(a, services.agentEvaluations),
    (a) => chatbotRoutes(a, services.chatbots, services.projects),
    (a) => knowledgeBaseRoutes(a, services.knowledgeBases, services.projects),
    (a) => knowledgeBaseEvaluationRoutes(a, services.knowledgeBases),
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
    (a) => {
      const execute: SqlPort['execute'] = async (query, context, params, signal) => {
        const answer = await sqlOverHttp.execute(query, context, params, signal);
        return answer.type === 'ok' ? { ...answer, affected_rows: answer.affected_rows ?? null } : answer;
      };
      sqlRoutes(a, {
        execute,
        // A streamed answer (response_format) comes from the engine as its rows are read, unless
        // MySQL's connection values are written in first (then it is answered whole).
        stream: (query, context, params, signal) =>
          sqlOverHttp.asWritten(query, context)
            ? sql.stream(query, context, params, signal)
            : execute(query, context, params, signal),
      });
    },
    (a) => modelRoutes(a, services.models, services.projects, sql),
    (a) => mlEngineRoutes(a, services.mlEngines),
    (a) => llmBudgetRoutes(a, services.llmBudgets),
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
  const limiters = loginLimiters(ctx.config.auth);
  app.post('/api/login', limiters.handlers);
  // Made by the first request that reads it, not at start: generating it takes longer than the rest
  // of building the app, and most processes (and most tests) never read it.
  let document: ReturnType<Api['openApiDocument']> | undefined;
  const openApi = () => (document ??= api.openApiDocument({ title: 'mindledger', version: VERSION }));
  app.get('/api/openapi.json', (_req, res) => {
    res.json(openApi());
  });
  let docPage: RequestHandler | undefined;
  const docs: RequestHandler = (req, res, next) => (docPage ??= swaggerUi.setup(openApi()))(req, res, next);
  app.use('/doc', swaggerUi.serve, docs);
  // The MCP server at /mcp/ (docs/mcp.md), behind the same guard (MCP_ENABLED).
  const mcp = ctx.config.mcp.enabled
    ? mcpRoutes(ctx, mcpPorts(ctx, services, sql), ctx.config.mcp, ctx.logger)
    : null;
  if (mcp) app.use(mcp.router);
  // Agents over A2A at /a2a/{project}/{agent}/ (docs/a2a.md), behind the same guard (A2A_ENABLED).
  const a2a = ctx.config.a2a.enabled ? a2aRoutes(ctx, a2aPorts(ctx, services), ctx.logger) : null;
  if (a2a) app.use(a2a.router);
  app.use(api.router);
  app.use(consoleRoutes());
  app.use(notFoundHandler);
  // Problem details never name this server's directories (DuckDB and Node quote file paths).
  registerServerPaths([ctx.config.dataDir, path.dirname(path.resolve(ctx.config.duckdbFile))]);
  if (mcp) app.use(mcp.challengeOnUnauthorized);
  if (a2a) app.use(a2a.challengeOnUnauthorized);
  app.use(errorMapper(ctx.logger));
  return {
    app,
    api,
    close: () => {
      limiters.close();
      mcp?.sessions.closeAll();
      a2a?.close();
    },
  };
};
