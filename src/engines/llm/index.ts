export {
  LlmConfigError,
  LlmError,
  isLlmConfigError,
  isLlmError,
  providerProblem,
  type LlmErrorKind,
} from './errors';
export { llmClientPool } from './clientPool';
export { createLlmClient, type LlmClientOptions } from './openaiClient';
export {
  llmDefaultsFromEnv,
  resolveLlmSettings,
  summarizeLlmSettings,
  SUPPORTED_PROVIDERS,
  type LlmDefaults,
  type LlmEngine,
  type LlmEngineResolver,
  type LlmSettings,
} from './providers';
export { type RetryPolicy } from './retry';
export type {
  ChatMessage,
  ChatRequest,
  ChatResult,
  ChatStreamEvent,
  FinishReason,
  JsonSchemaFormat,
  LlmClient,
  ToolCall,
  ToolSpec,
  Usage,
} from './types';
export { addUsage } from './types';
