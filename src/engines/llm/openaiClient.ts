import { attemptSignal } from './attemptSignal';
import { chatRequestBody } from './chatRequestBody';
import { LlmError } from './errors';
import { openAiSdk } from './openaiSdk';
import type { LlmSettings } from './providers';
import { safeBaseUrl, toLlmError } from './providerFailure';
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from './retry';
import { streamAccumulator, toFinishReason, toUsage } from './streamAccumulator';
import type {
  AssistantMessage,
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

/**
 * The SDK refuses to be made without a key; without one (a local Ollama, vLLM or LM Studio server)
 * it is given this placeholder and told to send no `Authorization` header at all (a null default
 * header removes it), so a server that rejects any credential it was not configured with still
 * answers. The placeholder never leaves the process.
 */
const NO_KEY = 'no-key';

/**
 * One client per resolved settings: OpenAI's own protocol over `baseURL`, our retries (429 and
 * 5xx only, `retry-after` honoured, cancellable), our timeouts (an attempt, or a stream's silence),
 * and errors with a kind and a message that never quotes the key.
 */
export const createLlmClient = (settings: LlmSettings, options: LlmClientOptions = {}): LlmClient => {
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const apiKey = settings.apiKey ?? NO_KEY;
  const keyless = settings.apiKey === undefined;
  const client = new (openAiSdk().OpenAI)({
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
    // The outbound policy's fetch: each request's destination (and any redirect) checked again.
    ...(settings.fetch ? { fetch: settings.fetch } : {}),
    ...(keyless
      ? { defaultHeaders: { Authorization: null } }
      : settings.provider === 'azure_openai'
        ? { defaultHeaders: { 'api-key': apiKey } }
        : {}),
    ...(settings.apiVersion ? { defaultQuery: { 'api-version': settings.apiVersion } } : {}),
  });

  const provider = { where: safeBaseUrl(settings.baseUrl), secrets: [settings.apiKey] };
  const attemptOf = (caller: AbortSignal | undefined) =>
    attemptSignal(caller, requestTimeoutMs, (error, model) => toLlmError(error, model, provider));

  const chat = (request: ChatRequest): Promise<ChatResult> =>
    withRetries(policy, request.signal, async (retries) => {
      const attempt = attemptOf(request.signal);
      const started = performance.now();
      try {
        const res = await client.chat.completions.create(
          { ...chatRequestBody(request, settings), stream: false },
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
      const attempt = attemptOf(request.signal);
      const started = performance.now();
      try {
        const stream = await client.chat.completions.create(
          { ...chatRequestBody(request, settings), stream: true, stream_options: { include_usage: true } },
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
        const attempt = attemptOf(request.signal);
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
      const attempt = attemptOf(signal);
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
