import type { SqlToolPort } from '../engines/agentLoop';
import { agentRunsService } from '../agentRuns/service';
import { agentsService } from '../agents/service';
import { chatbotsService } from '../chatbots/service';
import type { AppContext } from '../context';
import { databasesService } from '../databases/service';
import { filesService } from '../files/service';
import { llmCallsService } from '../llmCalls/service';
import { llmBudgetsService } from '../llmBudgets/service';
import { recordBudgetRefusal } from '../llmCalls/recording';
import { mlEnginesService } from '../mlEngines/service';
import { modelsService } from '../models/service';
import { instanceIdOf, type TrainingRows } from '../models/training';
import { jobsService } from '../jobs/service';
import { integrationWritesService } from '../integrationWrites/service';
import { triggersService, type TriggerSource } from '../triggers/service';
import { viewsService, type ViewCheck } from '../views/service';
import { knowledgeBasesService } from '../knowledgeBases/service';
import { projectDirectory } from '../projects/directory';
import { projectsService } from '../projects/service';
import { skillBody } from '../skills/present';
import { skillsService } from '../skills/service';
import { jobStatementProblem } from '../sql/statements/statementProblem';
import { sqlService } from '../sql/service';
import { sqlSlicesOf } from './sqlSlices';
import { sqlPortsOf } from './sqlPorts';
import type { BlobStore } from '../storage/blobs';
import { callerRows, callerWrite } from './callerRows';
import { agentEvaluationsService } from './agentEvaluations';
import { chatbotServices } from './chatbots';
import { replayPorts } from './replayPorts';
import { signedLedger } from './ledger';
import { usersService } from '../users/service';
import type { ExternalDatabases } from '../databases/pools';
import type { SqlObserver } from '../sql/observer';

/**
 * The composition root: every capability's service, each given the narrow ports it declares
 * (resolved lazily, so services that answer each other's questions can be built in any order).
 */
export const buildServices = (
  ctx: AppContext,
  blobs: BlobStore,
  externals: ExternalDatabases,
  /** Told of every SQL statement answered (the operator's metrics). */
  sqlObserver: SqlObserver,
) => {
  // The SQL service is built from the services below, and answers three of them: training and
  // knowledge bases read rows through it, agents' SQL tools run through it, views are planned by
  // it. Each reads it through a closure, called only once everything is built.
  const training: TrainingRows = {
    table: (database, query) => sql.queryTable(database, query),
    readable: (database, query) => sql.readable(database, query),
  };
  const agentSql = (): SqlToolPort => sql.agentTools;
  const viewCheck: ViewCheck = (project, name, query) => sql.checkView(project, name, query);
  const directory = projectDirectory(ctx.duck, ctx.cachedOf('projects'));
  const projects = projectsService(ctx, directory, {
    isIntegration: (name) => databases.isIntegration(name),
    removed: (before) => triggers.projectRemoved(before),
  });
  const databases = databasesService(ctx, projects, (name) => triggers.watching(name));
  const models = modelsService(ctx, directory, blobs, training, instanceIdOf(ctx.config.dataDir), (name) =>
    mlEngines.settingsOf(name),
  );
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
  const llmBudgets = llmBudgetsService(ctx, {
    recordRefusal: (request, refusal) => recordBudgetRefusal(ctx, request, refusal),
  });
  const llmDefaults = {
    openaiBaseUrl: ctx.config.llm.openaiBaseUrl,
    openaiApiKey: ctx.config.llm.openaiApiKey,
    model: ctx.config.llm.model,
    outbound: ctx.config.outbound,
  };
  const llmModelPorts = {
    engines: (name: string) => mlEngines.settingsOf(name),
    defaults: llmDefaults,
    requestTimeoutMs: ctx.config.llm.requestTimeoutMs,
    // LLM budgets admit every model call: a query's LLM functions' and an agent run's.
    spending: llmBudgets.admit,
  };
  const llmCalls = llmCallsService(ctx, llmModelPorts);
  // The evaluations' judge (llm_relevancy, EVALUATE AGENT's llm_judge): the LLM calls' own path.
  const judge = llmCalls.askJudge;
  const knowledgeBases = knowledgeBasesService(ctx, directory, blobs, {
    ...llmModelPorts,
    // Documents from a query are read like training rows: every row, through the SQL engine.
    rowsOf: (database, query) => sql.queryRows(database, query.sql, query.columns),
    // An evaluation's test table and `from_sql` are read as the caller's own SELECT would be.
    callerRows: callerRows(() => sql),
    // save_to, and a generated test set written to test_table: the caller's own write.
    callerWrite: callerWrite(() => sql),
    // llm_relevancy's judge: through the LLM calls' path, each call recorded.
    judge,
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
    ...llmModelPorts,
    // A replay reads the agent's SQL again as the caller's SELECT would, never a model.
    replay: replayPorts(
      () => sql,
      async (name) => (await databases.findIntegration(name)) !== undefined,
    ),
  });
  const agentEvaluations = agentEvaluationsService(ctx, directory, {
    agentRuns,
    sql: () => sql,
    judge,
    models: llmModelPorts,
  });
  const { chatMessages, chatbotRuntime } = chatbotServices(ctx, { chatbots, databases, agentRuns });
  const users = usersService(ctx, { sessionTtlMs: ctx.config.auth.sessionTtlMs });
  const ledger = signedLedger(ctx);
  const jobs = jobsService(ctx, directory, jobStatementProblem);
  const views = viewsService(ctx, directory, viewCheck);
  const integrationWrites = integrationWritesService(ctx);
  // The external databases triggers watch, through the same pools as SQL's.
  const triggerSource: TriggerSource = {
    integration: async (database) => {
      const found = await databases.findIntegration(database);
      if (!found) return undefined;
      // The schema the driver qualifies names by (its default included): one place decides it.
      const namespace = found.engine === 'postgres' ? (await externals.get(found.name)).namespace : undefined;
      return { name: found.name, engine: found.engine ?? '', schema: namespace ?? 'public' };
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
  const triggers = triggersService(ctx, directory, () => triggerSource);
  const services = {
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
    agentEvaluations,
    llmCalls,
    llmBudgets,
    knowledgeBases,
    chatMessages,
    chatbotRuntime,
    jobs,
    views,
    integrationWrites,
    triggers,
  };
  const sql = sqlService(ctx, sqlSlicesOf(services), sqlPortsOf(ctx, services), externals, sqlObserver);
  return { services, sql, triggerSource };
};
export type Services = ReturnType<typeof buildServices>['services'];
