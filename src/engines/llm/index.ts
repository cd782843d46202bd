export {
  LlmConfigError,
  LlmError,
  isLlmConfigError,
  isLlmError,
  providerProblem,
  redactSecrets,
  type LlmConfigErrorKind,
  type LlmErrorKind,
} from './errors';
export { createLlmClient, DEFAULT_REQUEST_TIMEOUT_MS, type LlmClientOptions } from './openaiClient';
export {
  llmDefaultsFromEnv,
  resolveLlmSettings,
  summarizeLlmSettings,
  SUPPORTED_PROVIDERS,
  type AgentLlmSource,
  type LlmDefaults,
  type LlmEngine,
  type LlmEngineResolver,
  type LlmSettings,
  type LlmSettingsSummary,
  type SupportedProvider,
} from './providers';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry';
export {
  answerValue,
  LLM_MODES,
  llmModelSpec,
  LlmSpecError,
  promptsOf,
  QUERY_OVERRIDES,
  renderTemplate,
  templateColumns,
  type LlmMode,
  type LlmModelSpec,
  type LlmPrompt,
} from './llmModelSpec';
export { streamAccumulator } from './streamAccumulator';
export type {
  AssistantMessage,
  ChatMessage,
  ChatRequest,
  ChatResult,
  ChatStreamEvent,
  EmbedRequest,
  FinishReason,
  JsonSchemaFormat,
  LlmClient,
  SystemMessage,
  ToolCall,
  ToolMessage,
  ToolSpec,
  Usage,
  UserMessage,
} from './types';
export { addUsage } from './types';
