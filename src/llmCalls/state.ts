import { recordedCallsAggregate, type RecordedCallsState } from '../shared/aggregate';

/**
 * The calls one SQL query made to LLMs, on the query's own stream (never a project's): a JOIN of a
 * table with an LLM model asks once per distinct prompt, and a project's stream stays small.
 */
export const llmQueryStream = (queryId: string) => `llm-query-${queryId}`;

export type LlmQueryState = RecordedCallsState;

export const llmQueryAggregate = recordedCallsAggregate('LlmCallRecorded');
