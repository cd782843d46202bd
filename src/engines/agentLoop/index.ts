export { mindsDbErrorType, stepText, type AgentRunEvent } from './events';
export { DIGEST_ROWS, resultDigest } from './resultDigest';
export { type KbHit, type KnowledgeBaseSearchPort } from './kbTools';
export { InvalidMessagesError, normalizeMessages } from './messages';
export { planAgentRun, runLimitsFromParams } from './plan';
export { buildSystemPrompt, renderPromptTemplate } from './prompt';
export { AgentRunError, ModelCallRefused, runAgent, type RunAgentInput, type RunAnswer } from './runAgent';
export { AgentSetupError, canonicalSkillKind, toolsFromSkills, type AgentSkill } from './skills';
export {
  formatQueryRows,
  type QueryRows,
  type SqlScope,
  type SqlToolPort,
  type TableColumn,
  type TableDescription,
} from './sqlTools';
export { ToolError, type AgentTool } from './tools';
