import type { AgentRunsService } from '../agentRuns/service';
import type { AgentsService } from '../agents/service';
import type { AgentEvaluationsService } from '../agents/evaluation';
import type { ChatbotsService } from '../chatbots/service';
import type { AppContext } from '../context';
import type { DatabasesService } from '../databases/service';
import { llmModelSpec } from '../engines/llm/llmModelSpec';
import type { FilesService } from '../files/service';
import type { JobsService } from '../jobs/service';
import type { ViewsService } from '../views/service';
import type { TriggersService } from '../triggers/service';
import type { IntegrationWritesService } from '../integrationWrites/service';
import type { KnowledgeBasesService } from '../knowledgeBases/service';
import type { MlEnginesService } from '../mlEngines/service';
import type { ModelsService } from '../models/service';
import type { LlmCallsService } from '../llmCalls/service';
import type { LlmBudgetsService } from '../llmBudgets/service';
import type { ProjectsService } from '../projects/service';
import type { SkillsService } from '../skills/service';
import { FILES_SCHEMA, nameKey } from '../shared/names';
import { quoteIdent } from '../shared/quoting';
import type { LlmModelAnswers, Predictions } from '../sql/pipeline/plan';
import type { SqlPorts } from '../sql/ports';

/**
 * What the SQL side uses of each capability: the same operations the REST routes call, so a
 * statement runs the same commands, deciders and validation as the matching request. The slices'
 * statements take their part of it (src/wiring/sqlSlices.ts); the SQL core takes its own shapes,
 * adapted below (src/sql/ports.ts).
 */
export type SliceServices = {
  readonly projects: Pick<ProjectsService, 'find' | 'create' | 'remove'>;
  readonly databases: Pick<
    DatabasesService,
    'exists' | 'create' | 'remove' | 'requireIntegration' | 'findIntegration'
  >;
  readonly files: Pick<FilesService, 'find' | 'digestOf' | 'tempPath' | 'register' | 'markdownFromUrl'>;
  readonly skills: Pick<SkillsService, 'get' | 'run'>;
  readonly agents: Pick<AgentsService, 'get' | 'run'>;
  readonly agentEvaluations: Pick<AgentEvaluationsService, 'evaluate'>;
  readonly chatbots: Pick<ChatbotsService, 'get' | 'run'>;
  readonly mlEngines: Pick<MlEnginesService, 'create' | 'remove'>;
  readonly agentRuns: Pick<AgentRunsService, 'complete' | 'findAgentName'>;
  readonly knowledgeBases: Pick<
    KnowledgeBasesService,
    'exists' | 'create' | 'remove' | 'insertQuery' | 'deleteWhere' | 'source' | 'evaluate' | 'index'
  >;
  readonly jobs: Pick<JobsService, 'create' | 'remove'>;
  readonly views: Pick<ViewsService, 'create' | 'update' | 'remove' | 'queryOf'>;
  readonly integrationWrites: Pick<IntegrationWritesService, 'record'>;
  readonly triggers: Pick<TriggersService, 'create' | 'remove'>;
  readonly models: Pick<
    ModelsService,
    'exists' | 'create' | 'retrain' | 'finetune' | 'remove' | 'describe' | 'predictor' | 'llmModel'
  >;
  readonly llmCalls: Pick<LlmCallsService, 'answerModel' | 'answerFunction'>;
  readonly llmBudgets: Pick<LlmBudgetsService, 'set' | 'drop'>;
};

/**
 * An LLM model queried as a table (src/llmCalls answers its rows): its columns are its target and
 * the input columns its prompt reads. Asked outside the reader the query holds (the calls are
 * recorded, and waited for in the read model, meanwhile).
 */
const llmModelAnswers = async (
  ctx: AppContext,
  services: Pick<SliceServices, 'models' | 'llmCalls'>,
  project: string,
  name: string,
): Promise<LlmModelAnswers | undefined> => {
  const model = await services.models.llmModel(project, name);
  if (!model) return undefined;
  let inputs: readonly string[] = [];
  try {
    inputs = llmModelSpec(model.target, model.options).inputs;
  } catch {
    // A definition the engine refuses now is refused with its reason when asked.
  }
  return {
    columns: [model.target, ...inputs.filter((c) => c !== model.target)],
    rows: (rows, overrides, signal) =>
      ctx.duck.detached(() => services.llmCalls.answerModel(model, rows, { overrides, signal })),
  };
};

/**
 * What FROM and the SQL functions evaluate. Models queried as tables predict; agents queried as
 * tables answer (each answer a run of its own, outside the reader the query holds: an agent's tools
 * read through readers of their own); a question's embedding may come from a provider, and LLM
 * calls and URL fetches go out: all asked outside the reader the query holds.
 */
const predictionsOf = (ctx: AppContext, services: SliceServices): Predictions => ({
  predictor: (project, name) => services.models.predictor(project, name),
  ask: (project, agent, question, signal) =>
    ctx.duck.detached(() =>
      services.agentRuns.complete(
        { project, agent, messages: [{ question }], via: 'sql' },
        { signal, waitForRecord: true },
      ),
    ),
  knowledgeBase: (project, name, question, signal) =>
    ctx.duck.detached(() => services.knowledgeBases.source(project, name, question, signal)),
  llmModel: (project, name) => llmModelAnswers(ctx, services, project, name),
  // LLM(), LLM_FILTER, LLM_REDUCE, LLM_RERANK (src/sql/faces/llm/calls.ts), on the default model.
  llmFunction: (asked, project, signal) =>
    ctx.duck.detached(() => services.llmCalls.answerFunction(asked, project, { signal })),
  // TO_MARKDOWN()'s documents: a file looked up (then read on the query's own connection), a URL
  // fetched and converted.
  toMarkdown: {
    file: async (name) => {
      const file = await ctx.duck.detached(() => services.files.find(name));
      return file && { format: file.format, table: `${FILES_SCHEMA}.${quoteIdent(nameKey(name))}` };
    },
    url: (url, signal) => ctx.duck.detached(() => services.files.markdownFromUrl(url, signal)),
  },
});

/** The SQL core's ports (src/sql/ports.ts), from the services. */
export const sqlPortsOf = (ctx: AppContext, services: SliceServices): SqlPorts => ({
  predictions: predictionsOf(ctx, services),
  projectExists: async (name) => (await services.projects.find(name)) !== undefined,
  databaseExists: (name) => services.databases.exists(name),
  models: services.models,
  recordIntegrationWrite: (write) => services.integrationWrites.record(write),
  files: {
    digestOf: (name) => services.files.digestOf(name),
    tempPath: () => services.files.tempPath(),
    register: (name, path, originalName, expected) =>
      services.files.register(name, path, originalName, { expected }),
  },
});
