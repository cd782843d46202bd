import type { LlmSettings } from '../engines/llm';
import type { LlmPrompt } from '../engines/llm/llmModelSpec';

/**
 * What `version = 'llm_relevancy'` asks of the judge: one prompt per retrieved chunk, sent to the
 * model `settings` names, each call recorded on the LLM calls' log (tokens, latency, caller) like
 * any SQL query's, so the judge's cost is in LLM_CALLS and LLM_USAGE. The answers, in order.
 */
export type JudgeRequest = {
  readonly settings: LlmSettings;
  readonly prompts: readonly LlmPrompt[];
  /** The project the calls are recorded under. */
  readonly project: string;
  /** What the calls' errors name (`llm_relevancy's judge`). */
  readonly what: string;
};

export type AskJudge = (request: JudgeRequest, signal?: AbortSignal) => Promise<string[]>;
