/**
 * The provider-neutral shapes the agent loop speaks. They mirror OpenAI's chat protocol (the one
 * every supported provider serves) without tying callers to the SDK's types, so another adapter
 * can sit behind `LlmClient` later.
 */

export type ToolCall = {
  readonly id: string;
  readonly name: string;
  /** The raw JSON text the model produced; it may be malformed, and the loop decides what to do. */
  readonly arguments: string;
};

type SystemMessage = { readonly role: 'system'; readonly content: string };
type UserMessage = { readonly role: 'user'; readonly content: string };
export type AssistantMessage = {
  readonly role: 'assistant';
  readonly content: string | null;
  readonly toolCalls?: readonly ToolCall[];
};
type ToolMessage = { readonly role: 'tool'; readonly toolCallId: string; readonly content: string };
export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** A function the model may call: `parameters` is a JSON Schema object. */
export type ToolSpec = {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
};

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export type Usage = {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
};

export type ChatRequest = {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolSpec[];
  /** `none` keeps the tools visible (their calls are in the history) but forbids new calls. */
  readonly toolChoice?: 'auto' | 'none';
  readonly temperature?: number;
  readonly maxTokens?: number;
  /**
   * `json_object`: the answer must be one JSON object (OpenAI's `response_format`); a JSON schema:
   * the answer must be an object of that schema (`json_schema`, strict).
   */
  readonly responseFormat?: 'json_object' | JsonSchemaFormat;
  readonly signal?: AbortSignal;
};

/** OpenAI's `response_format: {type: 'json_schema', json_schema: {name, schema, strict: true}}`. */
export type JsonSchemaFormat = {
  readonly name: string;
  readonly schema: Readonly<Record<string, unknown>>;
};

export type ChatResult = {
  readonly message: AssistantMessage;
  readonly finishReason: FinishReason;
  readonly usage: Usage | null;
  /** From sending the (last, successful) attempt to the complete answer. */
  readonly latencyMs: number;
  /** Attempts that failed with a retryable error (429, 5xx) before this answer. */
  readonly retries: number;
};

/**
 * What a streamed completion yields, in order: text and tool-call pieces as they arrive, then one
 * `done` carrying the assembled message (tool-call argument fragments joined per call index).
 */
export type ChatStreamEvent =
  | { readonly type: 'text'; readonly delta: string }
  | { readonly type: 'tool_call'; readonly index: number; readonly id: string; readonly name: string }
  | { readonly type: 'tool_arguments'; readonly index: number; readonly delta: string }
  | ({ readonly type: 'done' } & ChatResult);

export type EmbedRequest = {
  readonly model: string;
  readonly input: readonly string[];
  readonly dimensions?: number;
  readonly signal?: AbortSignal;
};

export interface LlmClient {
  /** `openai`, `ollama`, …: for events and messages; never the key. */
  readonly provider: string;
  chat(request: ChatRequest): Promise<ChatResult>;
  chatStream(request: ChatRequest): AsyncIterable<ChatStreamEvent>;
  /** One vector per input, in input order. */
  embed(request: EmbedRequest): Promise<number[][]>;
  /** The model ids the provider serves (a "check the model" action). */
  listModels(signal?: AbortSignal): Promise<string[]>;
}

export const addUsage = (a: Usage | null, b: Usage | null): Usage | null =>
  a === null
    ? b
    : b === null
      ? a
      : {
          promptTokens: a.promptTokens + b.promptTokens,
          completionTokens: a.completionTokens + b.completionTokens,
          totalTokens: a.totalTokens + b.totalTokens,
        };
