import type { LlmCallRecorded } from '../../events';
import type { LlmQueryState } from './state';

/** An answer as the query got it (a call, or the cache); its place in the query is the decider's to give. */
export type RecordLlmCall = { type: 'RecordLlmCall'; data: Omit<LlmCallRecorded['data'], 'seq'> };

/** Calls are numbered after the query's last, in the order they are recorded. */
export const decideLlmCalls = (commands: readonly RecordLlmCall[], state: LlmQueryState): LlmCallRecorded[] =>
  commands.map((c, i) => ({ type: 'LlmCallRecorded', data: { ...c.data, seq: state.calls + i + 1 } }));
