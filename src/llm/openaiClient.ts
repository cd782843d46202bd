import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { LlmError, providerDetail } from './errors';
import type { LlmSettings } from './providers';
import { DEFAULT_RETRY_POLICY, parseRetryAfter, withRetries, type RetryPolicy } from './retry';
import { streamAccumulator, toFinishReason, toUsage } from './streamAccumulator';
import type {
  AssistantMessage,
  ChatMessage,
  ChatRequest,
  ChatResult,
  ChatStreamEvent,
  EmbedRequest,
  LlmClient,
  ToolCall,
} from './types';

export type LlmClientOptions = {
  /** One attempt's limit; for a stream, the longest silence between two chunks. */
  readonly requestTimeoutMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  /** Inputs per embeddings request. */
  readonly embedBatchSize?: number;
};

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** vLLM's convention for "no key": the SDK refuses an empty one, and servers without auth ignore it. */
const NO_KEY = 'EMPTY';

const toWireMessage = (m: ChatMessage): ChatCompletionMessageParam => {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    default: {
      const _exhaustive: never = m;
      return _exhaustive;
    }
  }
};

const safeBaseUrl = (raw: string) => {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/$/, '');
  } catch {
    return 'the configured base_url';
  }
};

/** The innermost `code` of an error's cause chain (undici wraps ECONNREFUSED twice). */
const causeCode = (error: unknown): string | undefined => {
  // Not `instanceof Error`: fetch's errors may come from another realm (jest's VM contexts).
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if ('code' in current && typeof current.code === 'string') return current.code;
    current = 'cause' in current ? current.cause : undefined;
  }
  return undefined;
};

/**
 * One client per resolved settings: OpenAI's own protocol over `baseURL`, our retries (429 and
 * 5xx only, `retry-after` honoured, cancellable), our timeouts (an attempt, or a stream's silence),
 * and errors with a kind and a message that never quotes the key.
 */
export const createLlmClient = (settings: LlmSettings, options: LlmClientOptions = {}): LlmClient => {
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const secrets = [settings.apiKey];
  const where = safeBaseUrl(settings.baseUrl);
  const apiKey = settings.apiKey ?? NO_KEY;
  const client = new OpenAI({
    apiKey,
    baseURL: settings.baseUrl,
    // Everything the SDK would read from the environment is given, so only `settings` decide.
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
    maxRetries: 0,
    // A backstop only: each attempt has its own, shorter, cancellable deadline below.
    timeout: requestTimeoutMs + 5_000,
    logLevel: 'off',
    ...(settings.provider === 'azure_openai' ? { defaultHeaders: { 'api-key': apiKey } } : {}),
    ...(settings.apiVersion ? { defaultQuery: { 'api-version': settings.apiVersion } } : {}),
  });

  const toLlmError = (error: unknown, model: string | undefined): LlmError => {
    if (error instanceof LlmError) return error;
    if (error instanceof APIUserAbortError) return new LlmError('aborted', 'the request was cancelled');
    if (error instanceof APIConnectionTimeoutError)
      return new LlmError('timeout', `the provider at ${where} did not answer in time`);
    if (error instanceof APIConnectionError) {
      const code = causeCode(error);
      return new LlmError(
        'unreachable',
        `could not reach the provider at ${where}${code ? ` (${code})` : ''}: check base_url and that the server is running`,
      );
    }
    if (error instanceof APIError && typeof error.status === 'number') {
      const status = error.status;
      const detail = providerDetail(
        typeof error.error === 'object' && error.error !== null && 'message' in error.error
          ? String(error.error.message)
          : error.message,
        secrets,
      );
      const suffix = detail ? `: ${detail}` : '';
      if (status === 401 || status === 403)
        return new LlmError('authentication', `the provider rejected the API key (HTTP ${status})`, status);
      if (status === 429)
        return new LlmError(
          'rate_limit',
          `the provider is rate limiting requests (HTTP 429)${suffix}`,
          status,
          parseRetryAfter(error.headers),
        );
      if (status === 404)
        return new LlmError(
          'not_found',
          `the provider at ${where} does not know model '${model ?? '?'}' (HTTP 404)${suffix}`,
          status,
        );
      if (status === 408)
        return new LlmError('timeout', `the provider timed out (HTTP 408)${suffix}`, status);
      if (status >= 500)
        return new LlmError('provider_error', `the provider failed (HTTP ${status})${suffix}`, status);
      return new LlmError(
        'bad_request',
        `the provider refused the request (HTTP ${status})${suffix}`,
        status,
      );
    }
    const reason =
      typeof error === 'object' && error !== null && 'message' in error
        ? providerDetail(String(error.message), secrets)
        : 'unknown error';
    return new LlmError('provider_error', `the provider's answer was cut off or malformed (${reason})`);
  };

  /**
   * An attempt's signal: the caller's, plus our deadline. `restart` pushes the deadline back (a
   * stream that keeps sending is alive); the error mapping says which of the two fired.
   */
  const attemptSignal = (caller: AbortSignal | undefined) => {
    const deadline = new AbortController();
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const restart = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        deadline.abort();
      }, requestTimeoutMs);
    };
    restart();
    return {
      signal: caller ? AbortSignal.any([caller, deadline.signal]) : deadline.signal,
      restart,
      done: () => clearTimeout(timer),
      /** The SDK ends a stream quietly when its signal fires: this says why it ended, if it was us. */
      interruption: (): LlmError | undefined =>
        timedOut
          ? new LlmError('timeout', `the provider did not answer within ${requestTimeoutMs} ms`)
          : caller?.aborted
            ? new LlmError('aborted', 'the request was cancelled')
            : undefined,
      fail: (error: unknown, model: string | undefined): LlmError => {
        clearTimeout(timer);
        if (timedOut)
          return new LlmError('timeout', `the provider did not answer within ${requestTimeoutMs} ms`);
        if (caller?.aborted) return new LlmError('aborted', 'the request was cancelled');
        return toLlmError(error, model);
      },
    };
  };

  const requestBody = (request: ChatRequest): ChatCompletionCreateParamsBase => {
    const tools: ChatCompletionTool[] | undefined = request.tools?.length
      ? request.tools.map((t) => ({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: { ...t.parameters } },
        }))
      : undefined;
    const temperature = request.temperature ?? settings.temperature;
    const maxTokens = request.maxTokens ?? settings.maxTokens;
    return {
      model: request.model,
      messages: request.messages.map(toWireMessage),
      ...(tools ? { tools, tool_choice: request.toolChoice ?? 'auto' } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
    };
  };

  const chat = (request: ChatRequest): Promise<ChatResult> =>
    withRetries(policy, request.signal, async (retries) => {
      const attempt = attemptSignal(request.signal);
      const started = performance.now();
      try {
        const res = await client.chat.completions.create(
          { ...requestBody(request), stream: false },
          { signal: attempt.signal },
        );
        const choice = res.choices?.[0];
        if (!choice) throw new LlmError('provider_error', 'the provider answered without a choice');
        const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).flatMap((c) =>
          c.type === 'function'
            ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments ?? '' }]
            : [],
        );
        const message: AssistantMessage = {
          role: 'assistant',
          content: choice.message.content ?? null,
          ...(toolCalls.length ? { toolCalls } : {}),
        };
        return {
          message,
          finishReason: toFinishReason(choice.finish_reason),
          usage: toUsage(res.usage),
          latencyMs: performance.now() - started,
          retries,
        };
      } catch (error) {
        throw attempt.fail(error, request.model);
      } finally {
        attempt.done();
      }
    });

  async function* chatStream(request: ChatRequest): AsyncGenerator<ChatStreamEvent> {
    // Retries cover opening the stream only: once chunks flowed, a retry would repeat them.
    const opened = await withRetries(policy, request.signal, async (retries) => {
      const attempt = attemptSignal(request.signal);
      const started = performance.now();
      try {
        const stream = await client.chat.completions.create(
          { ...requestBody(request), stream: true, stream_options: { include_usage: true } },
          { signal: attempt.signal },
        );
        return { stream, attempt, started, retries };
      } catch (error) {
        throw attempt.fail(error, request.model);
      }
    });
    const { stream, attempt, started, retries } = opened;
    const acc = streamAccumulator();
    try {
      for await (const chunk of stream) {
        attempt.restart();
        for (const event of acc.feed(chunk)) yield event;
      }
    } catch (error) {
      throw attempt.fail(error, request.model);
    } finally {
      attempt.done();
    }
    const interrupted = attempt.interruption();
    if (interrupted) throw interrupted;
    if (!acc.finished())
      throw new LlmError('provider_error', 'the provider closed the stream before the answer was complete');
    yield {
      type: 'done',
      message: acc.message(),
      finishReason: acc.finishReason(),
      usage: acc.usage(),
      latencyMs: performance.now() - started,
      retries,
    };
  }

  const decodeVector = (raw: unknown): number[] => {
    if (Array.isArray(raw)) return raw.map(Number);
    if (typeof raw === 'string') {
      const bytes = Buffer.from(raw, 'base64');
      const floats = new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
      return Array.from(floats);
    }
    throw new LlmError(
      'provider_error',
      'the provider answered an embedding that is neither a list nor base64',
    );
  };

  const embed = async (request: EmbedRequest): Promise<number[][]> => {
    const batchSize = options.embedBatchSize ?? 256;
    const out: number[][] = [];
    for (let start = 0; start < request.input.length; start += batchSize) {
      const batch = request.input.slice(start, start + batchSize);
      const vectors = await withRetries(policy, request.signal, async () => {
        const attempt = attemptSignal(request.signal);
        try {
          const res = await client.embeddings.create(
            {
              model: request.model,
              input: batch,
              encoding_format: 'float',
              ...(request.dimensions ? { dimensions: request.dimensions } : {}),
            },
            { signal: attempt.signal },
          );
          const data = [...res.data].sort((a, b) => a.index - b.index);
          if (data.length !== batch.length)
            throw new LlmError(
              'provider_error',
              `the provider answered ${data.length} embeddings for ${batch.length} inputs`,
            );
          return data.map((d) => decodeVector(d.embedding as unknown));
        } catch (error) {
          throw attempt.fail(error, request.model);
        } finally {
          attempt.done();
        }
      });
      out.push(...vectors);
    }
    return out;
  };

  const listModels = (signal?: AbortSignal) =>
    withRetries(policy, signal, async () => {
      const attempt = attemptSignal(signal);
      try {
        const ids: string[] = [];
        for await (const model of client.models.list({ signal: attempt.signal })) ids.push(model.id);
        return ids;
      } catch (error) {
        throw attempt.fail(error, undefined);
      } finally {
        attempt.done();
      }
    });

  return { provider: settings.provider, chat, chatStream, embed, listModels };
};
