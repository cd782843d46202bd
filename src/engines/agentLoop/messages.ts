import { NamedError } from '../../shared/errors';
import { z } from 'zod';
import type { ChatMessage } from '../llm';

/**
 * A completion request's `messages`, in MindsDB's two shapes:
 * - `[{question, answer}]` (v25, and what SQL's `WHERE question=…` makes): every row but the last
 *   is a past exchange; the last row's question is the one to answer;
 * - `[{role, content}]` (v26, OpenAI-like): the last message must be the user's.
 * `userColumn`/`assistantColumn` are MindsDB's `user_column`/`assistant_column` params.
 */
export class InvalidMessagesError extends NamedError {}

type NormalizedMessages = {
  readonly question: string;
  readonly history: readonly ChatMessage[];
  /** The row the question came from, for `{{column}}` placeholders in a prompt template. */
  readonly lastRow: Readonly<Record<string, unknown>>;
};

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const roleMessage = z.object({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(textPart), z.null()]),
});

const asText = (content: z.infer<typeof roleMessage>['content']) =>
  content === null ? '' : typeof content === 'string' ? content : content.map((p) => p.text).join('');

const cell = (v: unknown): string | undefined =>
  v === null || v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v);

export const normalizeMessages = (
  input: unknown,
  options: { userColumn?: string; assistantColumn?: string } = {},
): NormalizedMessages => {
  const userColumn = options.userColumn ?? 'question';
  const assistantColumn = options.assistantColumn ?? 'answer';
  if (!Array.isArray(input)) throw new InvalidMessagesError('messages must be a list');
  if (input.length === 0) throw new InvalidMessagesError('messages is empty: send at least the question');

  const messages: ChatMessage[] = [];
  let lastRow: Record<string, unknown> = {};
  input.forEach((item: unknown, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new InvalidMessagesError(`messages[${i}] must be an object`);
    const row = item as Record<string, unknown>;
    const isLast = i === input.length - 1;
    if ('role' in row) {
      const parsed = roleMessage.safeParse(row);
      if (!parsed.success)
        throw new InvalidMessagesError(
          `messages[${i}]: role must be user, assistant or system, and content a string`,
        );
      const content = asText(parsed.data.content);
      messages.push({ role: parsed.data.role, content });
      if (isLast) lastRow = { [userColumn]: content };
      return;
    }
    if (userColumn in row || assistantColumn in row) {
      const question = cell(row[userColumn]);
      const answer = cell(row[assistantColumn]);
      if (question !== undefined) messages.push({ role: 'user', content: question });
      // The last row's answer is the blank to fill in, whatever it holds.
      if (answer !== undefined && answer !== '' && !isLast)
        messages.push({ role: 'assistant', content: answer });
      if (isLast) lastRow = row;
      return;
    }
    throw new InvalidMessagesError(
      `messages[${i}] has neither "role"/"content" nor "${userColumn}"/"${assistantColumn}"`,
    );
  });

  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user')
    throw new InvalidMessagesError("the last message must be the user's question");
  if (last.content.trim() === '') throw new InvalidMessagesError('the question is empty');
  return { question: last.content, history: messages.slice(0, -1), lastRow };
};
