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

const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/**
 * The SDK refuses to be made without a key; without one (a local Ollama, vLLM or LM Studio server)
 * it is given this placeholder and told to send no `Authorization` header at all (a null default
 * header removes it), so a server that rejects any credential it was not configured with still
 * answers. The placeholder never leaves the process.
 */
const NO_KEY = 'no-key';

/** The SDK's client for these settings: everything it would read from the environment is given. */
const sdkClient = (settings: LlmSettings, requestTimeoutMs: number) => {
  const apiKey = settings.apiKey ?? NO_KEY;
  const keyless = settings.apiKey === undefined;
  return new (openAiSdk().OpenAI)({
    apiKey,
    baseURL: settings.baseUrl,
    // Everything the SDK would read from the environment is given, so only `settings` decide.
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
    maxRetries: 0,
    // A backstop only: each attempt has its own, shorter, cancellable deadline.
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
};

type SdkClient = ReturnType<typeof sdkClient>;
type Completion = Awaited<ReturnType<SdkClient['chat']['completions']['create']>>;

/** A completion's first choice as our answer (its tool calls, usage and time). */
const chatResultOf = (
  res: Extract<Completion, { choices: unknown }>,
  started: number,
  retries: number,
): ChatResult => {
  const choice = res.choices?.[0];
  if (!choice) throw new LlmError('provider_error', 'the provider answered without a choice');
  const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).flatMap((c) =>
    c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments ?? '' }] : [],
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
};

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

/** What every call of one client shares: the SDK's client, the settings, retries and attempts. */
type Connection = {
  client: SdkClient;
  settings: LlmSettings;
  policy: RetryPolicy;
  attemptOf: (caller: AbortSignal | undefined) => ReturnType<typeof attemptSignal>;
};

/** `work` retried under the policy, each attempt with its own deadline and its errors mapped. */
const withAttempts = <T>(
  { policy, attemptOf }: Connection,
  caller: AbortSignal | undefined,
  model: string | undefined,
  work: (signal: AbortSignal, retries: number) => Promise<T>,
) =>
  withRetries(policy, caller, async (retries) => {
    const attempt = attemptOf(caller);
    try {
      return await work(attempt.signal, retries);
    } catch (error) {
      throw attempt.fail(error, model);
    } finally {
      attempt.done();
    }
  });

const chat = (c: Connection, request: ChatRequest): Promise<ChatResult> =>
  withAttempts(c, request.signal, request.model, async (signal, retries) => {
    const started = performance.now();
    const res = await c.client.chat.completions.create(
      { ...chatRequestBody(request, c.settings), stream: false },
      { signal },
    );
    return chatResultOf(res, started, retries);
  });

async function* chatStream(c: Connection, request: ChatRequest): AsyncGenerator<ChatStreamEvent> {
  // Retries cover opening the stream only: once chunks flowed, a retry would repeat them.
  const opened = await withRetries(c.policy, request.signal, async (retries) => {
    const attempt = c.attemptOf(request.signal);
    const started = performance.now();
    try {
      const stream = await c.client.chat.completions.create(
        { ...chatRequestBody(request, c.settings), stream: true, stream_options: { include_usage: true } },
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

const embedBatch = (c: Connection, request: EmbedRequest, batch: string[]) =>
  withAttempts(c, request.signal, request.model, async (signal) => {
    const res = await c.client.embeddings.create(
      {
        model: request.model,
        input: batch,
        encoding_format: 'float',
        ...(request.dimensions ? { dimensions: request.dimensions } : {}),
      },
      { signal },
    );
    const data = [...res.data].sort((a, b) => a.index - b.index);
    if (data.length !== batch.length)
      throw new LlmError(
        'provider_error',
        `the provider answered ${data.length} embeddings for ${batch.length} inputs`,
      );
    return data.map((d) => decodeVector(d.embedding as unknown));
  });

const embed = async (c: Connection, batchSize: number, request: EmbedRequest): Promise<number[][]> => {
  const out: number[][] = [];
  for (let start = 0; start < request.input.length; start += batchSize)
    out.push(...(await embedBatch(c, request, request.input.slice(start, start + batchSize))));
  return out;
};

const listModels = (c: Connection, signal?: AbortSignal) =>
  withAttempts(c, signal, undefined, async (attemptAbort) => {
    const ids: string[] = [];
    for await (const model of c.client.models.list({ signal: attemptAbort })) ids.push(model.id);
    return ids;
  });

/**
 * One client per resolved settings: OpenAI's own protocol over `baseURL`, our retries (429 and
 * 5xx only, `retry-after` honoured, cancellable), our timeouts (an attempt, or a stream's silence),
 * and errors with a kind and a message that never quotes the key.
 */
export const createLlmClient = (settings: LlmSettings, options: LlmClientOptions = {}): LlmClient => {
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const provider = { where: safeBaseUrl(settings.baseUrl), secrets: [settings.apiKey] };
  const c: Connection = {
    client: sdkClient(settings, requestTimeoutMs),
    settings,
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    attemptOf: (caller) =>
      attemptSignal(caller, requestTimeoutMs, (error, model) => toLlmError(error, model, provider)),
  };
  const batchSize = options.embedBatchSize ?? 256;
  return {
    provider: settings.provider,
    chat: (request) => chat(c, request),
    chatStream: (request) => chatStream(c, request),
    embed: (request) => embed(c, batchSize, request),
    listModels: (signal) => listModels(c, signal),
  };
};
