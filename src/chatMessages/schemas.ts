import { z } from 'zod';

export const chatbotPath = z.object({ project: z.string().min(1), chatbot: z.string().min(1) });
export const webhookPath = z.object({ token: z.string().min(1).max(200) });

const chatId = z.string().min(1).max(256);

/** `POST …/messages`: a message from a user; `message_id` makes a client's retry the same message. */
export const postMessageBody = z.object({
  text: z
    .string()
    .min(1, 'text must not be empty')
    .max(64 * 1024),
  user: z.string().min(1).max(256).default('user'),
  chat_id: chatId.default('default'),
  message_id: z.string().min(1).max(256).optional(),
});

export const postMessageQuery = z.object({
  /** Answer with the reply (or 202 when it takes longer than CHATBOT_WAIT_MS). */
  wait: z.enum(['true', 'false', '1', '0']).optional(),
});

export const conversationQuery = z.object({
  chat_id: chatId.optional(),
  /** A `seq` already seen: only what came after it. */
  after: z.string().regex(/^\d+$/, 'after must be a seq (a non-negative integer)').optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
});

const item = z.object({
  seq: z.string(),
  message_id: z.string(),
  chat_id: z.string(),
  role: z.enum(['user', 'assistant']),
  text: z.string(),
});

export const conversationView = z.array(item.catchall(z.unknown()));

export const postedMessageView = z.object({
  message_id: z.string(),
  chat_id: z.string(),
  duplicate: z.boolean(),
  status: z.string(),
  answer: z.object({ text: z.string(), answer_id: z.string(), trace_id: z.string().nullable() }).nullable(),
  error: z.string().nullable(),
});
