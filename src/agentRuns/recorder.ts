import type { AgentRunEvent as LoopEvent } from '../engines/agentLoop';
import type { AgentRunStarted } from '../../events';
import type { AppContext } from '../context';
import { decideRun, type RunCommand } from './decider';
import { runAggregate, runStream } from './state';

/** Longest text a run's event keeps of one field: events stay well inside MAX_EVENT_BYTES. */
const MAX_TEXT = 32_000;
const bounded = (text: string, max = MAX_TEXT) => (text.length <= max ? text : `${text.slice(0, max)}…`);
const jsonText = (value: unknown, max = 8_000) => {
  if (typeof value === 'string') return bounded(value, max);
  try {
    return bounded(JSON.stringify(value) ?? 'null', max);
  } catch {
    return bounded(String(value), max);
  }
};

/** The model call that `event` answered, as its run records it (the request's shape, the answer). */
const modelCallCommand = (
  traceId: string,
  event: Extract<LoopEvent, { type: 'llm.response' }>,
  request: Extract<LoopEvent, { type: 'llm.request' }> | undefined,
  fallbackModel: string,
  at: string,
): RunCommand => ({
  type: 'RecordModelCall',
  data: {
    traceId,
    step: event.step,
    model: request?.model ?? fallbackModel,
    messageCount: request?.messageCount ?? 0,
    toolChoice: request?.toolChoice ?? null,
    finishReason: event.finishReason,
    content: event.content === null ? null : bounded(event.content),
    toolCalls: event.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: jsonText(c.arguments) })),
    usage: event.usage,
    latencyMs: Math.round(event.latencyMs),
    retries: event.retries,
    at,
  },
});

/** A tool's result with the call that asked it, as its run records it (texts bounded). */
const toolCallCommand = (
  traceId: string,
  event: Extract<LoopEvent, { type: 'tool.result' }>,
  call: Extract<LoopEvent, { type: 'tool.called' }> | undefined,
  at: string,
): RunCommand => ({
  type: 'RecordToolCall',
  data: {
    traceId,
    step: event.step,
    callId: event.callId,
    name: event.name,
    kind: event.kind,
    arguments: jsonText(call?.args ?? null),
    ok: event.ok,
    error: event.error === undefined ? null : bounded(event.error, 2_000),
    rejected: event.rejected ?? false,
    sql: event.sql === undefined ? null : bounded(event.sql, 16_000),
    rows: event.rows ?? null,
    ...(event.digest !== undefined ? { resultDigest: event.digest } : {}),
    ms: Math.round(event.ms),
    at,
  },
});

/**
 * Turns the loop's steps into the run's events, appended to the run's own stream in order (the
 * loop awaits each, so the log never lags the run by more than the step in flight). A model call
 * is recorded once its answer is in (request and response together), a tool call once its result is.
 */
export const runRecorder = (
  ctx: AppContext,
  traceId: string,
  started: Omit<AgentRunStarted['data'], 'maxSteps' | 'timeoutMs' | 'tools' | 'stream' | 'startedAt'>,
) => {
  const stream = runStream(traceId);
  let last: bigint | null = null;
  // The model call that gave the answer is recorded with the answer, in one append: a run that
  // needs no tool costs two appends, not three. Anything else that follows flushes it first.
  let held: RunCommand | null = null;
  const append = async (command: RunCommand) => {
    const commands = held ? [held, command] : [command];
    held = null;
    const outcome = await ctx.commands.run(stream, runAggregate, (s) =>
      commands.flatMap((c) => decideRun(c, s)),
    );
    last = outcome.lastPosition ?? last;
  };
  const at = () => ctx.clock().toISOString();
  const requests = new Map<number, Extract<LoopEvent, { type: 'llm.request' }>>();
  const calls = new Map<string, Extract<LoopEvent, { type: 'tool.called' }>>();

  const record = async (event: LoopEvent) => {
    switch (event.type) {
      case 'run.started':
        return append({
          type: 'StartRun',
          data: {
            ...started,
            tools: [...event.tools],
            maxSteps: event.limits.maxSteps,
            timeoutMs: event.limits.timeoutMs,
            stream: event.stream,
            startedAt: at(),
          },
        });
      case 'llm.request':
        requests.set(event.step, event);
        return;
      case 'llm.response': {
        const request = requests.get(event.step);
        requests.delete(event.step);
        const record =
          event.toolCalls.length === 0 && held === null ? (c: RunCommand) => void (held = c) : append;
        return record(modelCallCommand(traceId, event, request, started.llm.model, at()));
      }
      case 'tool.called':
        calls.set(event.callId, event);
        return;
      case 'tool.result': {
        const call = calls.get(event.callId);
        calls.delete(event.callId);
        return append(toolCallCommand(traceId, event, call, at()));
      }
      case 'run.answered':
        return append({
          type: 'AnswerRun',
          data: {
            traceId,
            answer: bounded(event.answer, 256_000),
            sql: event.sql.map((s) => bounded(s, 16_000)),
            context: jsonText(event.context, 64_000),
            steps: event.steps,
            usage: event.usage,
            ms: Math.round(event.ms),
            answeredAt: at(),
          },
        });
      case 'run.failed':
        return append({
          type: 'FailRun',
          data: {
            traceId,
            kind: event.kind,
            message: bounded(event.message, 2_000),
            steps: event.steps,
            usage: event.usage,
            ms: Math.round(event.ms),
            failedAt: at(),
          },
        });
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  };
  return {
    record,
    /** The position of the last event recorded, for the answer to wait for. */
    lastPosition: () => last,
  };
};
