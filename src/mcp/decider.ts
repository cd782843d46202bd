import type { McpCallRecorded } from '../../events';
import type { SessionState } from './state';

/** A call, as the server saw it happen; its place in the session is the decider's to give. */
type RecordCall = { type: 'RecordCall'; data: Omit<McpCallRecorded['data'], 'seq'> };

/** Each call is recorded once, numbered after the session's last: the record keeps the calls' order. */
export const decideCall = (command: RecordCall, state: SessionState): McpCallRecorded[] => [
  { type: 'McpCallRecorded', data: { ...command.data, seq: state.calls + 1 } },
];
