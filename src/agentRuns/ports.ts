import type { SpendingPort } from '../llmBudgets/state';
import type { KnowledgeBaseSearchPort, SqlToolPort } from '../engines/agentLoop';
import type { LlmDefaults, LlmEngineResolver } from '../engines/llm';
import type { ReplayPorts } from './replay';

/** What runs need beyond the log: the tools' data, and where LLM settings come from. */
export type AgentRunPorts = {
  readonly sql: SqlToolPort;
  /** A project's knowledge bases, searched by name (`kb`, or `project.kb` for another project's). */
  readonly kb?: (project: string) => KnowledgeBaseSearchPort;
  /** A named ML engine's handler and real settings (CREATE ML_ENGINE). */
  readonly engines: LlmEngineResolver;
  /** OPENAI_BASE_URL, OPENAI_API_KEY, LLM_DEFAULT_MODEL. */
  readonly defaults: LlmDefaults;
  readonly requestTimeoutMs: number;
  /** The LLM budgets each model call of a run is admitted by (src/llmBudgets). */
  readonly spending: SpendingPort;
  /** What a replay reads the agent's SQL with (never a model). */
  readonly replay: ReplayPorts;
};
