import type { RecordedEvent } from '../../events';

/**
 * How a stream's events fold into the state its deciders read (the command runner in
 * src/eventlog/commands.ts loads and folds streams with it).
 */
export type Aggregate<S> = {
  readonly initialState: () => S;
  readonly evolve: (state: S, event: RecordedEvent) => S;
};

/**
 * What recording the next call on a stream of calls (an MCP session's, one SQL query's calls to
 * LLMs) needs: how many it holds, the highest `seq` recorded.
 */
export type RecordedCallsState = { readonly calls: number };

export const recordedCallsAggregate = (
  recorded: 'LlmCallRecorded' | 'McpCallRecorded',
): Aggregate<RecordedCallsState> => ({
  initialState: () => ({ calls: 0 }),
  evolve: (state, event) =>
    event.type === recorded ? { calls: Math.max(state.calls, event.data.seq) } : state,
});
