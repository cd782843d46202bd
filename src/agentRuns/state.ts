import crypto from 'node:crypto';
import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { nameKey } from '../shared/names';

/** A run's own stream: every step of one agent run, never the project's stream. */
export const runStream = (traceId: string) => `agent-run-${traceId}`;

/**
 * A conversation the server keeps (`thread_id`), per project and agent. The client's thread id is
 * any text, so the stream is named by a digest of it.
 */
export const threadStream = (project: string, agent: string, threadId: string) =>
  `agent-thread-${crypto
    .createHash('sha256')
    .update(`${nameKey(project)}\u0000${nameKey(agent)}\u0000${threadId}`)
    .digest('hex')
    .slice(0, 40)}`;

export type RunState =
  | { status: 'none' }
  | { status: 'running'; traceId: string }
  | { status: 'answered' | 'failed'; traceId: string };

export const runAggregate: Aggregate<RunState> = {
  initialState: () => ({ status: 'none' }),
  evolve: (state, event: RecordedEvent): RunState => {
    switch (event.type) {
      case 'AgentRunStarted':
        return { status: 'running', traceId: event.data.traceId };
      case 'AgentRunAnswered':
        return { status: 'answered', traceId: event.data.traceId };
      case 'AgentRunFailed':
        return { status: 'failed', traceId: event.data.traceId };
      default:
        return state;
    }
  },
};

/** The turns of a thread, oldest first; a question is asked with the last of them as its memory. */
type ThreadState = { readonly turns: readonly { question: string; answer: string }[] };

/** MindsDB's chatbot memory keeps the last 100 messages: 50 exchanges. */
export const THREAD_MEMORY_TURNS = 50;

export const threadAggregate: Aggregate<ThreadState> = {
  initialState: () => ({ turns: [] }),
  evolve: (state, event: RecordedEvent): ThreadState => {
    switch (event.type) {
      case 'AgentThreadTurn':
        return {
          turns: [...state.turns, { question: event.data.question, answer: event.data.answer }].slice(
            -THREAD_MEMORY_TURNS,
          ),
        };
      default:
        return state;
    }
  },
};
