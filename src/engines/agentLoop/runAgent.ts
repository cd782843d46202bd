import {
  addUsage,
  isLlmError,
  type ChatMessage,
  type ChatRequest,
  type ChatResult,
  type LlmClient,
  type ToolCall,
  type Usage,
} from '../llm';
import { DEFAULT_RUN_LIMITS, type AgentRunEvent, type RunFailureKind, type RunLimits } from './events';
import { toJsonText, toolSpecs, ToolError, type AgentTool, type ToolKind } from './tools';
import { messageOf, NamedError } from '../../shared/errors';

export type RunAgentInput = {
  readonly llm: LlmClient;
  readonly model: string;
  readonly systemPrompt: string;
  /** Earlier turns, oldest first (see normalizeMessages). */
  readonly history: readonly ChatMessage[];
  readonly question: string;
  readonly tools: readonly AgentTool[];
  readonly limits?: Partial<RunLimits>;
  /** Default 0: the same question over the same data should get the same answer. */
  readonly temperature?: number;
  readonly signal?: AbortSignal;
  /** Each step, in order; awaited, so a recorder can persist it before the run goes on. */
  readonly onEvent?: (event: AgentRunEvent) => void | Promise<void>;
  /**
   * Given: the model is called in streaming mode and answer text arrives here as it is produced.
   * Text a model writes in a step that then calls tools is streamed too (rare with native tool
   * calling); `step` tells the steps apart, and `run.answered` has the final text.
   */
  readonly onTextDelta?: (delta: { readonly step: number; readonly text: string }) => void;
  /**
   * Asked before each model call with the messages it will send; throwing ModelCallRefused ends the
   * run (kind `refused`) without the call being made or counted as a step.
   */
  readonly beforeModelCall?: (messages: readonly ChatMessage[]) => Promise<void>;
};

/** What `beforeModelCall` throws to refuse a call: the run fails with its message. */
export class ModelCallRefused extends NamedError {}

type AgentRunResult = {
  readonly answer: string;
  /** Queries that ran (successfully), in order. */
  readonly sql: readonly string[];
  /** Passages retrieved from knowledge bases. */
  readonly context: readonly unknown[];
  /** Model calls made. */
  readonly steps: number;
  readonly usage: Usage | null;
};

/**
 * A run's answer as the doors give it back (REST's completions, A2A): the answer with the queries and
 * passages behind it, and the trace the run is recorded under.
 */
export type RunAnswer = { readonly traceId: string } & Pick<AgentRunResult, 'answer' | 'sql' | 'context'>;

/** A run that ended without an answer; `run.failed` was emitted with the same kind and message. */
export class AgentRunError extends Error {
  constructor(
    readonly kind: RunFailureKind,
    message: string,
    readonly steps: number,
    readonly usage: Usage | null,
    readonly sql: readonly string[],
  ) {
    super(message);
    this.name = 'AgentRunError';
  }
}

/** Thrown inside the loop; becomes an AgentRunError with the run's totals. */
class Stop extends Error {
  constructor(
    readonly kind: RunFailureKind,
    message: string,
  ) {
    super(message);
  }
}

class Interrupted extends Error {}

/** A tool may ignore its signal; the run must not wait for it past the deadline. */
const raceAbort = <T>(work: Promise<T>, signal: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(new Interrupted());
    const onAbort = () => reject(new Interrupted());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });

/** Defaults for whatever is missing (an explicit `undefined` included). */
const withDefaults = (given: Partial<RunLimits> | undefined): RunLimits => {
  const pick = (key: keyof RunLimits) => {
    const v = given?.[key];
    return v !== undefined && Number.isFinite(v) && v > 0 ? v : DEFAULT_RUN_LIMITS[key];
  };
  return {
    maxSteps: pick('maxSteps'),
    timeoutMs: pick('timeoutMs'),
    maxConsecutiveToolErrors: pick('maxConsecutiveToolErrors'),
    maxToolResultChars: pick('maxToolResultChars'),
  };
};

const truncate = (text: string, max: number) =>
  text.length <= max
    ? { text, truncated: false }
    : { text: `${text.slice(0, max)}\n…[cut: ${text.length - max} more characters]`, truncated: true };

const errorContent = (message: string) => toJsonText({ error: message.slice(0, 2_000) });

const FINAL_ANSWER_NOTE = (maxSteps: number) =>
  `You have used the ${maxSteps} tool steps this question allows. Do not call tools any more: answer the user's question now with what you found, and say what is missing if you could not find everything.`;

/** The fields of a `tool.result` event that differ between a success and a failure. */
type ToolResultFields = Omit<
  Extract<AgentRunEvent, { type: 'tool.result' }>,
  'type' | 'step' | 'callId' | 'name' | 'kind' | 'ms'
>;

/** A tool call's arguments: the parsed JSON, or the raw text and what the model is told of it. */
const parseArguments = (call: ToolCall): { args: unknown; argsError?: string } => {
  try {
    return { args: call.arguments.trim() === '' ? {} : (JSON.parse(call.arguments) as unknown) };
  } catch (error) {
    return {
      args: call.arguments,
      argsError: `the arguments of ${call.name} are not valid JSON (${error instanceof Error ? error.message : 'parse error'}); send one JSON object matching the tool's schema`,
    };
  }
};

/**
 * One run of the agent loop: it owns the deadline's timer, the combined signal, the event sink
 * and the run's totals, and one method per stage (a model call, a tool call, the loop, the end).
 */
class AgentRun {
  private readonly limits: RunLimits;
  private readonly started = performance.now();
  private readonly deadline = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly signal: AbortSignal;
  private readonly byName: Map<string, AgentTool>;
  private readonly specs: ReturnType<typeof toolSpecs>;
  private readonly toolNames: string[];
  private readonly streaming: boolean;
  private steps = 0;
  private usage: Usage | null = null;
  private readonly sql: string[] = [];
  private readonly context: unknown[] = [];
  private sinkFailed = false;

  constructor(private readonly input: RunAgentInput) {
    this.limits = withDefaults(input.limits);
    this.timer = setTimeout(() => this.deadline.abort(), this.limits.timeoutMs);
    this.signal = input.signal ? AbortSignal.any([input.signal, this.deadline.signal]) : this.deadline.signal;
    this.byName = new Map(input.tools.map((t) => [t.name, t]));
    this.specs = toolSpecs(input.tools);
    this.toolNames = input.tools.map((t) => t.name);
    this.streaming = input.onTextDelta !== undefined;
  }

  private elapsed() {
    return Math.round(performance.now() - this.started);
  }

  private async emit(event: AgentRunEvent) {
    try {
      await this.input.onEvent?.(event);
    } catch (error) {
      this.sinkFailed = true;
      throw error;
    }
  }

  private async callModel(request: ChatRequest, step: number): Promise<ChatResult> {
    if (!this.streaming) return this.input.llm.chat(request);
    for await (const event of this.input.llm.chatStream(request)) {
      if (event.type === 'text') this.input.onTextDelta?.({ step, text: event.delta });
      if (event.type === 'done') return event;
    }
    throw new Stop('provider_error', 'the provider stream ended without an answer');
  }

  private async emitToolResult(
    call: ToolCall,
    step: number,
    kind: ToolKind | 'unknown',
    t0: number,
    fields: ToolResultFields,
  ) {
    await this.emit({
      type: 'tool.result',
      step,
      callId: call.id,
      name: call.name,
      kind,
      ...fields,
      ms: Math.round(performance.now() - t0),
    });
  }

  private async runTool(call: ToolCall, step: number): Promise<{ content: string; ok: boolean }> {
    const tool = this.byName.get(call.name);
    const kind: ToolKind | 'unknown' = tool?.kind ?? 'unknown';
    const { args, argsError } = parseArguments(call);
    await this.emit({ type: 'tool.called', step, callId: call.id, name: call.name, kind, args });
    const t0 = performance.now();
    const fail = async (message: string, details: { rejected?: boolean; sql?: string } = {}) => {
      await this.emitToolResult(call, step, kind, t0, {
        ok: false,
        error: message,
        ...(details.rejected ? { rejected: true } : {}),
        ...(details.sql !== undefined ? { sql: details.sql } : {}),
      });
      return { content: errorContent(message), ok: false };
    };
    if (!tool)
      return fail(
        `there is no tool named "${call.name}"; the tools are: ${this.toolNames.join(', ') || 'none'}`,
      );
    if (argsError) return fail(argsError);
    const { signal, limits } = this;
    try {
      const outcome = await raceAbort(
        tool.invoke(args, { signal, maxResultChars: limits.maxToolResultChars }),
        signal,
      );
      const raw = typeof outcome.content === 'string' ? outcome.content : toJsonText(outcome.content);
      const { text, truncated } = truncate(raw, limits.maxToolResultChars);
      if (outcome.sql !== undefined) this.sql.push(outcome.sql);
      if (outcome.context) this.context.push(...outcome.context);
      await this.emitToolResult(call, step, kind, t0, {
        ok: true,
        ...(outcome.sql !== undefined ? { sql: outcome.sql } : {}),
        ...(outcome.rows !== undefined ? { rows: outcome.rows } : {}),
        ...(outcome.digest !== undefined ? { digest: outcome.digest } : {}),
        ...(truncated ? { truncated } : {}),
      });
      return { content: text, ok: true };
    } catch (error) {
      if (error instanceof Interrupted || signal.aborted) throw error;
      if (error instanceof ToolError) return fail(error.message, error.details);
      return fail(messageOf(error));
    }
  }

  /** One model call of the loop, recorded before and after. */
  private async askModel(messages: readonly ChatMessage[], step: number, final: boolean) {
    const { input, specs } = this;
    const toolChoice = specs.length ? (final ? 'none' : 'auto') : null;
    await this.emit({
      type: 'llm.request',
      step,
      model: input.model,
      messageCount: messages.length,
      tools: this.toolNames,
      toolChoice,
    });
    const result = await this.callModel(
      {
        model: input.model,
        messages: [...messages],
        ...(toolChoice ? { tools: specs, toolChoice } : {}),
        temperature: input.temperature ?? 0,
        signal: this.signal,
      },
      step,
    );
    this.usage = addUsage(this.usage, result.usage);
    await this.emit({
      type: 'llm.response',
      step,
      finishReason: result.finishReason,
      content: result.message.content,
      toolCalls: (result.message.toolCalls ?? []).map((c) => ({
        id: c.id,
        name: c.name,
        arguments: c.arguments,
      })),
      usage: result.usage,
      latencyMs: Math.round(result.latencyMs),
      retries: result.retries,
    });
    return result;
  }

  /** The answer of a step that called no tools (or had to answer), or why there is none. */
  private finalAnswer(result: ChatResult, final: boolean) {
    const content = result.message.content ?? '';
    if (content.trim()) return content;
    if (final && result.message.toolCalls?.length)
      throw new Stop(
        'max_steps',
        `the agent was still calling tools after ${this.limits.maxSteps} steps and gave no answer`,
      );
    throw new Stop(
      'empty_answer',
      `the model returned neither an answer nor a tool call (finish reason: ${result.finishReason})`,
    );
  }

  private async loop(): Promise<string> {
    const { input, limits } = this;
    const messages: ChatMessage[] = [
      { role: 'system', content: input.systemPrompt },
      ...input.history,
      { role: 'user', content: input.question },
    ];
    let consecutiveErrors = 0;
    for (;;) {
      const final = this.steps >= limits.maxSteps;
      if (final) messages.push({ role: 'system', content: FINAL_ANSWER_NOTE(limits.maxSteps) });
      await input.beforeModelCall?.(messages);
      const step = ++this.steps;
      const result = await this.askModel(messages, step, final);
      const calls = result.message.toolCalls ?? [];
      if (calls.length === 0 || final) return this.finalAnswer(result, final);
      messages.push(result.message);
      for (const call of calls) {
        const { content: toolContent, ok } = await this.runTool(call, step);
        messages.push({ role: 'tool', toolCallId: call.id, content: toolContent });
        consecutiveErrors = ok ? 0 : consecutiveErrors + 1;
        if (consecutiveErrors >= limits.maxConsecutiveToolErrors) {
          const last = JSON.parse(toolContent) as { error?: string };
          throw new Stop(
            'tool_errors',
            `${consecutiveErrors} tool calls failed in a row; the last: ${last.error ?? 'unknown error'}`,
          );
        }
      }
    }
  }

  private failureOf(error: unknown): Stop {
    if (this.deadline.signal.aborted && !this.input.signal?.aborted)
      return new Stop('timeout', `the agent did not answer within ${this.limits.timeoutMs / 1000} s`);
    if (this.input.signal?.aborted) return new Stop('aborted', 'the run was cancelled');
    if (error instanceof Stop) return error;
    if (error instanceof ModelCallRefused) return new Stop('refused', error.message);
    if (isLlmError(error)) return new Stop(error.kind, error.message);
    return new Stop('internal', messageOf(error));
  }

  async run(): Promise<AgentRunResult> {
    const { input, sql, context } = this;
    try {
      await this.emit({
        type: 'run.started',
        model: input.model,
        question: input.question,
        historyMessages: input.history.length,
        tools: this.toolNames,
        limits: this.limits,
        stream: this.streaming,
      });
      const answer = await this.loop();
      const { steps, usage } = this;
      await this.emit({
        type: 'run.answered',
        answer,
        sql: [...sql],
        context: [...context],
        steps,
        usage,
        ms: this.elapsed(),
      });
      return { answer, sql, context, steps, usage };
    } catch (error) {
      // A recorder that cannot record must not be asked to record the failure too.
      if (this.sinkFailed) throw error;
      const stop = this.failureOf(error);
      const { steps, usage } = this;
      await this.emit({
        type: 'run.failed',
        kind: stop.kind,
        message: stop.message,
        steps,
        usage,
        ms: this.elapsed(),
      });
      throw new AgentRunError(stop.kind, stop.message, steps, usage, sql);
    } finally {
      clearTimeout(this.timer);
    }
  }
}

/**
 * The agent loop with native tool calling: call the model, run the tools it asks for, feed the
 * results back, until it answers. Bounded by steps (then one forced answer, as LangChain's
 * `early_stopping_method="generate"`), a deadline, the caller's signal and consecutive tool errors.
 * No persistence, no HTTP: the caller records `onEvent` and serves the result.
 */
export const runAgent = async (input: RunAgentInput): Promise<AgentRunResult> => new AgentRun(input).run();
