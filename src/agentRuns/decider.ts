import type {
  AgentRunAnswered,
  AgentRunFailed,
  AgentRunModelCalled,
  AgentRunStarted,
  AgentRunToolCalled,
  AgentThreadTurn,
} from '../../events';
import { conflict } from '../shared/errors';
import type { RunState } from './state';

/**
 * A run records what happened: the loop reports each step and the decider only keeps the record in
 * order (a run starts once; nothing is recorded after it answered or failed).
 */
export type RunCommand =
  | { type: 'StartRun'; data: AgentRunStarted['data'] }
  | { type: 'RecordModelCall'; data: AgentRunModelCalled['data'] }
  | { type: 'RecordToolCall'; data: AgentRunToolCalled['data'] }
  | { type: 'AnswerRun'; data: AgentRunAnswered['data'] }
  | { type: 'FailRun'; data: AgentRunFailed['data'] };

export const decideRun = (
  command: RunCommand,
  state: RunState,
): (AgentRunStarted | AgentRunModelCalled | AgentRunToolCalled | AgentRunAnswered | AgentRunFailed)[] => {
  if (command.type === 'StartRun') {
    if (state.status !== 'none') throw conflict(`Run ${command.data.traceId} has started already`);
    return [{ type: 'AgentRunStarted', data: command.data }];
  }
  if (state.status !== 'running')
    throw conflict(
      `Run ${command.data.traceId} is ${state.status === 'none' ? 'not started' : state.status}`,
    );
  switch (command.type) {
    case 'RecordModelCall':
      return [{ type: 'AgentRunModelCalled', data: command.data }];
    case 'RecordToolCall':
      return [{ type: 'AgentRunToolCalled', data: command.data }];
    case 'AnswerRun':
      return [{ type: 'AgentRunAnswered', data: command.data }];
    case 'FailRun':
      return [{ type: 'AgentRunFailed', data: command.data }];
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
};

/** A thread remembers each answered question. */
export const decideThreadTurn = (turn: AgentThreadTurn['data']): AgentThreadTurn[] => [
  { type: 'AgentThreadTurn', data: turn },
];
