import type { AgentRunsService } from '../agentRuns/service';
import type { AgentsService } from '../agents/service';
import type { AgentEvaluationsService } from '../agents/evaluation';
import type { ChatbotsService } from '../chatbots/service';
import type { DatabasesService } from '../databases/service';
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

/**
 * What the SQL interface needs of each capability: the same operations the REST routes call, so a
 * statement runs the same commands, deciders and validation as the matching request. The SQL layer
 * is an interface over every capability, like HTTP; it names their operations here (types only)
 * and is handed the services by the composition root.
 */
export type SqlPorts = {
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
    'exists' | 'create' | 'remove' | 'insertQuery' | 'deleteWhere' | 'source' | 'evaluate'
  >;
  readonly jobs: Pick<JobsService, 'create' | 'remove'>;
  readonly views: Pick<ViewsService, 'create' | 'update' | 'remove' | 'queryOf'>;
  readonly integrationWrites: IntegrationWritesService;
  readonly triggers: Pick<TriggersService, 'create' | 'remove'>;
  readonly models: Pick<
    ModelsService,
    'exists' | 'create' | 'retrain' | 'finetune' | 'remove' | 'describe' | 'predictor' | 'llmModel'
  >;
  readonly llmCalls: Pick<LlmCallsService, 'answerModel' | 'answerFunction'>;
  readonly llmBudgets: Pick<LlmBudgetsService, 'set' | 'drop'>;
};
