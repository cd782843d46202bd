import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';

/**
 * The calls one SQL query made to LLMs, on the query's own stream (never a project's): a JOIN of a
 * table with an LLM model asks once per distinct prompt, and a project's stream stays small.
 */
export const llmQueryStream = (queryId: string) => `llm-query-${queryId}`;

/** What recording the next call needs: how many the query has recorded. */
export type LlmQueryState = { readonly calls: number };

export const llmQueryAggregate: Aggregate<LlmQueryState> = {
  initialState: () => ({ calls: 0 }),
  evolve: (state, event: RecordedEvent): LlmQueryState => {
    switch (event.type) {
      case 'LlmCallRecorded':
        return { calls: Math.max(state.calls, event.data.seq) };
      default:
        return state;
    }
  },
};
