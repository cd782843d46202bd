export {
  DEFAULT_RUN_LIMITS,
  mindsDbErrorType,
  stepText,
  type MindsDbStreamErrorType,
  type AgentRunEvent,
  type AgentRunEventType,
  type RunFailureKind,
  type RunLimits,
  type ToolCallSummary,
} from './events';
export { DIGEST_ROWS, resultDigest } from './resultDigest';
export { KB_TOOL_BASE_NAME, kbTool, type KbHit, type KbScope, type KnowledgeBaseSearchPort } from './kbTools';
export { InvalidMessagesError, normalizeMessages, type NormalizedMessages } from './messages';
export { planAgentRun, runLimitsFromParams, type StoredAgent } from './plan';
export { buildSystemPrompt, DEFAULT_PROMPT_TEMPLATE, renderPromptTemplate, toolRules } from './prompt';
export {
  AgentRunError,
  ModelCallRefused,
  runAgent,
  type AgentRunResult,
  type RunAgentInput,
} from './runAgent';
export {
  AgentSetupError,
  canonicalSkillKind,
  SUPPORTED_SKILL_TYPES,
  toolsFromSkills,
  type AgentData,
  type AgentSetupErrorKind,
  type AgentSkill,
  type AgentToolPorts,
} from './skills';
export {
  formatQueryRows,
  formatTableDescription,
  SQL_TOOL_BASE_NAMES,
  sqlTools,
  type QueryRows,
  type SqlScope,
  type SqlToolNames,
  type SqlToolPort,
  type TableColumn,
  type TableDescription,
} from './sqlTools';
export {
  assignToolNames,
  defineTool,
  toJsonText,
  ToolError,
  toolSpecs,
  type AgentTool,
  type ToolContext,
  type ToolKind,
  type ToolOutcome,
} from './tools';
