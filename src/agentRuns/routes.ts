import { mindsDbErrorType, type AgentRunEvent as LoopEvent } from '../engines/agentLoop';
import { problem, type Api } from '../http/api';
import { readResponses } from '../http/resourceRoutes';
import { isDomainError } from '../shared/errors';
import {
  agentParams,
  completionAnswer,
  completionBody,
  runAnswer,
  runParams,
  runsAnswer,
  runsQuery,
} from './schemas';
import { AgentRunProblem, type AgentRunsService, type Completion } from './service';

/** An answer as MindsDB's completions answer it (the fork's too, src/agentRuns/replayRoutes.ts). */
export const answerBody = (c: Completion) => ({
  message: {
    content: c.answer,
    role: 'assistant' as const,
    trace_id: c.traceId,
    ...(c.context.length > 0 ? { context: [...c.context] } : {}),
    ...(c.sql.length > 0 ? { sql: [...c.sql] } : {}),
  },
});

/** MindsDB v25's stream chunks for the loop's steps: actions when a tool is called, steps when it answered. */
const streamChunk = (event: LoopEvent, traceId: string, calls: Map<string, unknown>): unknown => {
  switch (event.type) {
    case 'tool.called':
      calls.set(event.callId, event.args);
      return { actions: [{ tool: event.name, tool_input: event.args, log: '' }], trace_id: traceId };
    case 'tool.result':
      return {
        steps: [
          {
            action: { tool: event.name, tool_input: calls.get(event.callId) ?? null, log: '' },
            observation: event.ok ? `${event.rows ?? 0} rows` : `Error: ${event.error ?? 'failed'}`,
          },
        ],
        trace_id: traceId,
      };
    default:
      return undefined;
  }
};

export const agentRunRoutes = (api: Api, runs: AgentRunsService) => {
  const requireAgent = async ({ params }: { params: { project: string; agent: string } }) =>
    runs.requireAgent(params.project, params.agent);
  return api
    .add({
      method: 'post',
      path: '/api/projects/:project/agents/:agent/completions',
      tag: 'agents',
      summary: 'Ask an agent: it answers, using its skills (each run recorded step by step)',
      params: agentParams,
      before: requireAgent,
      body: completionBody,
      responses: {
        200: { description: 'The answer', schema: completionAnswer },
        400: problem('No messages, or invalid messages, LLM settings or skills'),
        404: problem('Unknown project or agent'),
        429: problem('The LLM provider asks to slow down'),
        502: problem('The LLM provider refused (the key, the model) or failed, or the agent gave no answer'),
        504: problem('The run took longer than its time limit'),
      },
      handle: async ({ params, body, signal }) => {
        const completion = await runs.complete(
          {
            project: params.project,
            agent: params.agent,
            messages: body.messages,
            threadId: body.thread_id,
            via: 'rest',
          },
          { signal },
        );
        return { status: 200, body: answerBody(completion) };
      },
    })
    .add({
      method: 'post',
      path: '/api/projects/:project/agents/:agent/completions/stream',
      tag: 'agents',
      summary:
        'Ask an agent, the answer streamed (text/event-stream, MindsDB chunks: start, actions, steps, output, sql, context, end)',
      params: agentParams,
      before: requireAgent,
      body: completionBody,
      responses: {
        200: { description: 'Server-sent events; errors after the start are {"type":"error"} events' },
        400: problem('No messages, or invalid messages, LLM settings or skills'),
        404: problem('Unknown project or agent'),
      },
      handle: async ({ params, body }) => {
        // Refusals (unknown agent, bad messages or settings) are still problem+json answers.
        const run = await runs.prepare({
          project: params.project,
          agent: params.agent,
          messages: body.messages,
          threadId: body.thread_id,
          via: 'rest',
        });
        return {
          status: 200,
          eventStream: {
            produce: async (send, signal) => {
              send({ type: 'start', prompt: run.question, trace_id: run.traceId });
              const calls = new Map<string, unknown>();
              const completion = await run.execute({
                signal,
                onStep: (event) => {
                  const chunk = streamChunk(event, run.traceId, calls);
                  if (chunk !== undefined) send(chunk);
                },
                onText: (text) =>
                  send({ output: text, messages: [{ content: text }], trace_id: run.traceId }),
              });
              for (const sql of completion.sql) send({ type: 'sql', content: sql, trace_id: run.traceId });
              if (completion.context.length > 0)
                send({ type: 'context', content: completion.context, trace_id: run.traceId });
              send({ type: 'end', trace_id: run.traceId });
            },
            onError: (error) => ({
              type: 'error',
              content: isDomainError(error)
                ? `${error.title}: ${error.detail}`
                : 'The run failed; see its trace',
              error_type: error instanceof AgentRunProblem ? mindsDbErrorType(error.runKind) : 'general',
              trace_id: run.traceId,
            }),
          },
        };
      },
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/agents/:agent/runs',
      tag: 'agents',
      summary: "An agent's runs, newest first (beyond MindsDB)",
      params: agentParams,
      query: runsQuery,
      responses: readResponses('Runs', runsAnswer, 'Unknown project or agent'),
      handle: async ({ params, query }) => ({
        status: 200,
        body: await runs.runs(params.project, params.agent, {
          before: query.before === undefined ? undefined : BigInt(query.before),
          limit: query.limit,
        }),
      }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/agents/:agent/runs/:trace_id',
      tag: 'agents',
      summary:
        'One run, step by step: each model call (tokens, latency) and tool call (the SQL run or refused)',
      params: runParams,
      responses: readResponses('The run', runAnswer, 'Unknown run'),
      handle: async ({ params }) => ({
        status: 200,
        body: await runs.run(params.project, params.agent, params.trace_id),
      }),
    });
};
