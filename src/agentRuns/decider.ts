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

type Command<T extends RunCommand['type']> = Extract<RunCommand, { type: T }>;

const startRun = (command: Command<'StartRun'>, state: RunState): AgentRunStarted[] => {
  if (state.status !== 'none') throw conflict(`Run ${command.data.traceId} has started already`);
  return [{ type: 'AgentRunStarted', data: command.data }];
};

/** A step is recorded only between a run's start and its answer or failure. */
const requireRunning = (command: RunCommand, state: RunState) => {
  if (state.status !== 'running')
    throw conflict(
      `Run ${command.data.traceId} is ${state.status === 'none' ? 'not started' : state.status}`,
    );
};

const recordModelCall = (command: Command<'RecordModelCall'>, state: RunState): AgentRunModelCalled[] => {
  requireRunning(command, state);
  return [{ type: 'AgentRunModelCalled', data: command.data }];
};

const recordToolCall = (command: Command<'RecordToolCall'>, state: RunState): AgentRunToolCalled[] => {
  requireRunning(command, state);
  return [{ type: 'AgentRunToolCalled', data: command.data }];
};

const answerRun = (command: Command<'AnswerRun'>, state: RunState): AgentRunAnswered[] => {
  requireRunning(command, state);
  return [{ type: 'AgentRunAnswered', data: command.data }];
};

const failRun = (command: Command<'FailRun'>, state: RunState): AgentRunFailed[] => {
  requireRunning(command, state);
  return [{ type: 'AgentRunFailed', data: command.data }];
};

export const decideRun = (
  command: RunCommand,
  state: RunState,
): (AgentRunStarted | AgentRunModelCalled | AgentRunToolCalled | AgentRunAnswered | AgentRunFailed)[] => {
  switch (command.type) {
    case 'StartRun':
      return startRun(command, state);
    case 'RecordModelCall':
      return recordModelCall(command, state);
    case 'RecordToolCall':
      return recordToolCall(command, state);
    case 'AnswerRun':
      return answerRun(command, state);
    case 'FailRun':
      return failRun(command, state);
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
