import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { AssistantMessage, ChatStreamEvent, FinishReason, ToolCall, Usage } from './types';

export const toFinishReason = (reason: string | null | undefined): FinishReason => {
  switch (reason) {
    case 'stop':
    case 'tool_calls':
    case 'length':
    case 'content_filter':
      return reason;
    // The pre-tools name of a call; some compatible servers still send it.
    case 'function_call':
      return 'tool_calls';
    default:
      return 'other';
  }
};

export const toUsage = (
  usage: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null | undefined,
): Usage | null =>
  usage
    ? {
        promptTokens: usage.prompt_tokens ?? 0,
        completionTokens: usage.completion_tokens ?? 0,
        totalTokens: usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0),
      }
    : null;

type PartialCall = { id: string; name: string; arguments: string };

/**
 * Builds one assistant message out of `chat.completion.chunk`s. Tool calls arrive as deltas keyed
 * by `index`: the first names the call, later ones carry argument fragments split anywhere
 * (mid-string, mid-escape), which only make JSON once joined. Servers differ at the edges: some
 * omit `index` (one call per chunk, matched by id) or `id`, some repeat the name in every delta.
 */
export const streamAccumulator = () => {
  let content = '';
  let sawContent = false;
  const calls = new Map<number, PartialCall>();
  let finishReason: FinishReason | undefined;
  let usage: Usage | null = null;

  const indexOf = (delta: { index?: number; id?: string }) => {
    if (typeof delta.index === 'number') return delta.index;
    for (const [i, call] of calls) if (delta.id && call.id === delta.id) return i;
    return delta.id || calls.size === 0 ? calls.size : calls.size - 1;
  };

  const feed = (chunk: ChatCompletionChunk): ChatStreamEvent[] => {
    const out: ChatStreamEvent[] = [];
    if (chunk.usage) usage = toUsage(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      if (choice.index !== undefined && choice.index !== 0) continue;
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string' && delta.content !== '') {
        content += delta.content;
        sawContent = true;
        out.push({ type: 'text', delta: delta.content });
      }
      for (const tc of delta.tool_calls ?? []) {
        const index = indexOf(tc);
        let call = calls.get(index);
        const name = tc.function?.name ?? '';
        if (!call) {
          call = { id: tc.id ?? '', name, arguments: '' };
          calls.set(index, call);
          out.push({ type: 'tool_call', index, id: call.id, name });
        } else {
          if (!call.id && tc.id) call.id = tc.id;
          if (name && call.name !== name) call.name += name;
        }
        const args = tc.function?.arguments;
        if (args) {
          call.arguments += args;
          out.push({ type: 'tool_arguments', index, delta: args });
        }
      }
      if (choice.finish_reason) finishReason = toFinishReason(choice.finish_reason);
    }
    return out;
  };

  const message = (): AssistantMessage => {
    const toolCalls: ToolCall[] = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({ id: c.id || `call_${index}`, name: c.name, arguments: c.arguments }));
    return {
      role: 'assistant',
      content: sawContent ? content : null,
      ...(toolCalls.length ? { toolCalls } : {}),
    };
  };

  return {
    feed,
    message,
    /** Whether the provider ended the stream properly (a finish reason arrived). */
    finished: () => finishReason !== undefined,
    finishReason: (): FinishReason => finishReason ?? (calls.size ? 'tool_calls' : 'stop'),
    usage: () => usage,
  };
};
