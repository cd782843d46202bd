import { agentContracts, type AgentEvent } from './agents';
import { agentEvaluationContracts, type AgentEvaluationEvent } from './agentEvaluations';
import { agentRunContracts, type AgentRunEvent } from './agentRuns';
import { chatbotContracts, type ChatbotEvent } from './chatbots';
import { chatMessageContracts, type ChatMessageEvent } from './chatMessages';
import type { Recorded, ResourceDeclaration } from './contract';
import { databaseContracts, type DatabaseEvent } from './databases';
import { fileContracts, type FileBlobEvent, type FileEvent } from './files';
import { jobContracts, type JobEvent, type JobRunEvent } from './jobs';
import { viewContracts, type ViewEvent } from './views';
import { triggerContracts, type TriggerEvent, type TriggerFiringEvent } from './triggers';
import { integrationWriteContracts, type IntegrationWriteEvent } from './integrationWrites';
import { mcpContracts, type McpEvent } from './mcp';
import { llmModelContracts, type LlmModelEvent } from './llmModels';
import { llmBudgetContracts, type LlmBudgetEvent } from './llmBudgets';
import { knowledgeBaseContracts, type KnowledgeBaseEvent } from './knowledgeBases';
import {
  knowledgeBaseEvaluationContracts,
  type KnowledgeBaseEvaluationEvent,
} from './knowledgeBaseEvaluations';
import { ledgerContracts, type LedgerEvent } from './ledger';
import { mlEngineContracts, type MlEngineEvent } from './mlEngines';
import { modelContracts, type ModelEvent } from './models';
import { projectLifecycleContracts, type ProjectLifecycleEvent } from './projects';
import { skillContracts, type SkillEvent } from './skills';
import { userContracts, type SessionEvent, type UserEvent } from './users';

export * from './contract';
export * from './projects';
export * from './databases';
export * from './skills';
export * from './agents';
export * from './agentEvaluations';
export * from './chatbots';
export * from './files';
export * from './models';
export * from './mlEngines';
export * from './agentRuns';
export * from './knowledgeBases';
export * from './knowledgeBaseEvaluations';
export * from './chatMessages';
export * from './users';
export * from './ledger';
export * from './jobs';
export * from './views';
export * from './triggers';
export * from './integrationWrites';
export * from './mcp';
export * from './llmModels';
export * from './llmBudgets';

/** Every event type the log may hold. A type missing here cannot be appended. */
export const allContracts = [
  ...projectLifecycleContracts,
  ...databaseContracts,
  ...skillContracts,
  ...agentContracts,
  ...agentEvaluationContracts,
  ...chatbotContracts,
  ...fileContracts,
  ...modelContracts,
  ...mlEngineContracts,
  ...agentRunContracts,
  ...knowledgeBaseContracts,
  ...knowledgeBaseEvaluationContracts,
  ...chatMessageContracts,
  ...userContracts,
  ...ledgerContracts,
  ...jobContracts,
  ...viewContracts,
  ...triggerContracts,
  ...integrationWriteContracts,
  ...mcpContracts,
  ...llmModelContracts,
  ...llmBudgetContracts,
] as const;

/**
 * Every contract of the log declares the resource its events are about: the ledger seals an event's
 * secrets under that resource's key and forgets them with it (src/ledger/resources.ts). A contract
 * without it fails to compile here.
 */
const declared: readonly { readonly resource: ResourceDeclaration }[] = allContracts;
void declared;

/**
 * One discriminated union of every event of the contract: deciders produce its members, and
 * evolve functions and projections narrow it with `switch (event.type)`, so the compiler checks
 * every handler against the schema.
 */
export type MindledgerEvent =
  | ProjectLifecycleEvent
  | DatabaseEvent
  | SkillEvent
  | AgentEvent
  | AgentEvaluationEvent
  | ChatbotEvent
  | FileEvent
  | FileBlobEvent
  | ModelEvent
  | MlEngineEvent
  | AgentRunEvent
  | KnowledgeBaseEvent
  | KnowledgeBaseEvaluationEvent
  | ChatMessageEvent
  | UserEvent
  | SessionEvent
  | LedgerEvent
  | JobEvent
  | JobRunEvent
  | ViewEvent
  | TriggerEvent
  | TriggerFiringEvent
  | IntegrationWriteEvent
  | McpEvent
  | LlmModelEvent
  | LlmBudgetEvent;

export type EventType = MindledgerEvent['type'];

/** An event as read back from the log: where and when it was stored, and its current shape. */
export type RecordedEvent = Recorded<MindledgerEvent>;

/** A recorded event of the types `T`, narrowed to them. */
export type RecordedOf<T extends EventType> = Recorded<Extract<MindledgerEvent, { type: T }>>;

/** The union and the list of contracts name the same types (a type in one only fails to compile). */
type ContractType = (typeof allContracts)[number]['type'];
const sameTypes: [ContractType] extends [EventType]
  ? [EventType] extends [ContractType]
    ? true
    : never
  : never = true;
void sameTypes;
