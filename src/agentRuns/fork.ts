import crypto from 'node:crypto';
import { normalizeMessages } from '../engines/agentLoop';
import { settled, type AppContext } from '../context';
import { conflict, notFound } from '../shared/errors';
import type { AgentLoader } from './agentLookup';
import { setupProblem, type agentCompletions, type CompletionHandlers } from './completion';
import { decideThreadTurn } from './decider';
import { runStream, THREAD_MEMORY_TURNS, threadAggregate, threadStream } from './state';

/** What a fork needs: the log, the agent's loader, and completions to ask the new question with. */
type ForkDeps = {
  readonly ctx: AppContext;
  readonly loadAgent: AgentLoader;
  readonly prepare: ReturnType<typeof agentCompletions>['prepare'];
};

/**
 * The conversation up to and including a run's turn: the turns of its thread before it (when it
 * was asked in one), then its own question and answer. Turns a client sent as history were not
 * recorded (only how many): they are not part of it.
 */
const conversationUpTo = async (
  { ctx, loadAgent }: ForkDeps,
  projectName: string,
  agentRef: string,
  traceId: string,
) => {
  const { project, agent } = await loadAgent(projectName, agentRef);
  const { events } = await ctx.log.readStream(runStream(traceId), 0n);
  const started = events.find((e) => e.type === 'AgentRunStarted');
  if (
    started?.type !== 'AgentRunStarted' ||
    started.data.projectId !== project.id ||
    BigInt(started.data.agentId) !== agent.id
  )
    throw notFound(`Agent ${agent.name} has no run ${traceId}`, 'Run not found');
  const answered = events.find((e) => e.type === 'AgentRunAnswered');
  if (answered?.type !== 'AgentRunAnswered')
    throw conflict(`Run ${traceId} has no answer to continue from`, 'Run not answered');
  const own = { question: started.data.question, answer: answered.data.answer, traceId };
  let earlier: (typeof own)[] = [];
  if (started.data.threadId !== null) {
    const thread = await ctx.log.readStream(
      threadStream(project.name, agent.name, started.data.threadId),
      0n,
    );
    const turns = thread.events.flatMap((e) =>
      e.type === 'AgentThreadTurn'
        ? [{ question: e.data.question, answer: e.data.answer, traceId: e.data.traceId }]
        : [],
    );
    const at = turns.findIndex((t) => t.traceId === traceId);
    earlier = at < 0 ? [] : turns.slice(0, at);
  }
  return {
    project,
    agent,
    threadId: started.data.threadId,
    historyNotKept: started.data.threadId === null ? started.data.historyMessages : 0,
    turns: [...earlier, own].slice(-THREAD_MEMORY_TURNS),
  };
};

/**
 * Continues a conversation from an earlier turn: a new thread (`thread_id`, or one made up)
 * holding the conversation up to and including run `traceId`, then the question asked in it.
 * The original thread is left as it is.
 */
export const forkRun = async (
  deps: ForkDeps,
  projectName: string,
  agentRef: string,
  traceId: string,
  request: { messages: unknown; threadId?: string },
  handlers: CompletionHandlers = {},
) => {
  const { ctx } = deps;
  const from = await conversationUpTo(deps, projectName, agentRef, traceId);
  try {
    normalizeMessages(request.messages);
  } catch (error) {
    throw setupProblem(error);
  }
  const threadId = request.threadId ?? `fork-${crypto.randomUUID()}`;
  const stream = threadStream(from.project.name, from.agent.name, threadId);
  const seeded = await ctx.commands.run(stream, threadAggregate, (state) => {
    if (state.turns.length > 0)
      throw conflict(`Thread ${threadId} exists already: a fork starts a new thread`, 'Thread exists');
    return from.turns.flatMap((t) =>
      decideThreadTurn({
        threadId,
        project: from.project.name,
        agent: from.agent.name,
        traceId: t.traceId,
        question: t.question,
        answer: t.answer,
        at: ctx.clock().toISOString(),
      }),
    );
  });
  await settled(ctx, seeded.lastPosition);
  const completion = await (
    await deps.prepare({
      project: from.project.name,
      agent: from.agent.name,
      messages: request.messages,
      threadId,
      via: 'rest',
    })
  ).execute(handlers);
  return {
    completion,
    threadId,
    forkedFrom: {
      traceId,
      threadId: from.threadId,
      turns: from.turns.length,
      historyNotKept: from.historyNotKept,
    },
  };
};
