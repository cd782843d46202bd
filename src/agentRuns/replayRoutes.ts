import { z } from 'zod';
import { problem, type Api } from '../http/api';
import { readResponses } from '../http/resourceRoutes';
import { answerBody } from './routes';
import { completionAnswer, completionBody, runParams } from './schemas';
import type { AgentRunsService } from './service';

const replayAnswer = z
  .record(z.string(), z.unknown())
  .describe(
    'The run replayed from its events (no model called): its steps and answer as recorded, each SQL step read again as of the position it ran at and as of now (`replay.differs`), and `changed_steps`',
  );

const forkAnswer = completionAnswer.extend({
  thread_id: z.string().describe('The new thread: ask again with this thread_id to go on'),
  forked_from: z.object({
    trace_id: z.string(),
    thread_id: z.string().nullable(),
    turns: z.number().int().describe('Turns of the conversation copied into the new thread'),
    history_not_kept: z
      .number()
      .int()
      .describe('Messages the client sent as history with the run (not recorded, so not copied)'),
  }),
});

/** Beyond MindsDB (which keeps agent memory in its paid product only): replay and fork, from the log. */
export const agentRunReplayRoutes = (
  api: Api,
  runs: Pick<AgentRunsService, 'replay' | 'fork' | 'requireAgent'>,
) =>
  api
    .add({
      method: 'get',
      path: '/api/projects/:project/agents/:agent/runs/:trace_id/replay',
      tag: 'agents',
      summary:
        'Replay a run from its events without calling the model: the same steps and answer, its SQL read again as of the run and as of now, the steps whose answer differs named',
      params: runParams,
      responses: readResponses('The replay', replayAnswer, 'Unknown project, agent or run'),
      handle: async ({ params }) => ({
        status: 200,
        body: await runs.replay(params.project, params.agent, params.trace_id),
      }),
    })
    .add({
      method: 'post',
      path: '/api/projects/:project/agents/:agent/runs/:trace_id/fork',
      tag: 'agents',
      summary:
        'Continue a conversation from an earlier turn: a new thread holding the conversation up to this run, then the question asked in it',
      params: runParams,
      before: async ({ params }) => runs.requireAgent(params.project, params.agent),
      body: completionBody,
      responses: {
        200: { description: 'The answer, in the new thread', schema: forkAnswer },
        400: problem('No messages, or invalid messages'),
        404: problem('Unknown project, agent or run'),
        409: problem('The run has no answer, or the thread exists already'),
        502: problem('The LLM provider failed'),
      },
      handle: async ({ params, body, signal }) => {
        const forked = await runs.fork(
          params.project,
          params.agent,
          params.trace_id,
          { messages: body.messages, threadId: body.thread_id },
          { signal },
        );
        return {
          status: 200,
          body: {
            ...answerBody(forked.completion),
            thread_id: forked.threadId,
            forked_from: {
              trace_id: forked.forkedFrom.traceId,
              thread_id: forked.forkedFrom.threadId,
              turns: forked.forkedFrom.turns,
              history_not_kept: forked.forkedFrom.historyNotKept,
            },
          },
        };
      },
    });
