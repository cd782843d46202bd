import type {
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { LlmSettings } from './providers';
import type { ChatMessage, ChatRequest } from './types';

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

/** A chat request in OpenAI's wire shape; the request's temperature and token limit win over the settings'. */
export const chatRequestBody = (
  request: ChatRequest,
  settings: Pick<LlmSettings, 'temperature' | 'maxTokens'>,
): ChatCompletionCreateParamsBase => {
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
    ...(request.responseFormat === 'json_object'
      ? { response_format: { type: 'json_object' } }
      : request.responseFormat
        ? {
            response_format: {
              type: 'json_schema',
              json_schema: {
                name: request.responseFormat.name,
                schema: { ...request.responseFormat.schema },
                strict: true,
              },
            },
          }
        : {}),
  };
};
