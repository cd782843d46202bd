import type {
  AgentRunAnswered,
  AgentRunFailed,
  AgentRunModelCalled,
  AgentRunStarted,
  AgentRunToolCalled,
  AgentThreadTurn,
} from '../../events';
import { conflict } from '../shared/errors';
import { decideByType } from '../shared/decision';
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

/** A step is recorded only between a run's start and its answer or failure: the step, as its event has it. */
const running = <C extends RunCommand>(command: C, state: RunState): C['data'] => {
  if (state.status !== 'running')
    throw conflict(
      `Run ${command.data.traceId} is ${state.status === 'none' ? 'not started' : state.status}`,
    );
  return command.data;
};

const recordModelCall = (command: Command<'RecordModelCall'>, state: RunState): AgentRunModelCalled[] => [
  { type: 'AgentRunModelCalled', data: running(command, state) },
];

const recordToolCall = (command: Command<'RecordToolCall'>, state: RunState): AgentRunToolCalled[] => [
  { type: 'AgentRunToolCalled', data: running(command, state) },
];

const answerRun = (command: Command<'AnswerRun'>, state: RunState): AgentRunAnswered[] => [
  { type: 'AgentRunAnswered', data: running(command, state) },
];

const failRun = (command: Command<'FailRun'>, state: RunState): AgentRunFailed[] => [
  { type: 'AgentRunFailed', data: running(command, state) },
];

export const decideRun = decideByType<
  RunCommand,
  RunState,
  AgentRunStarted | AgentRunModelCalled | AgentRunToolCalled | AgentRunAnswered | AgentRunFailed
>({
  StartRun: startRun,
  RecordModelCall: recordModelCall,
  RecordToolCall: recordToolCall,
  AnswerRun: answerRun,
  FailRun: failRun,
});

/** A thread remembers each answered question. */
export const decideThreadTurn = (turn: AgentThreadTurn['data']): AgentThreadTurn[] => [
  { type: 'AgentThreadTurn', data: turn },
];
