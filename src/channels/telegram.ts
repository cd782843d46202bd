/**
 * Telegram Bot API: inbound messages by long polling `getUpdates` (the offset confirms what was
 * read), answers by `sendMessage`. Every call is `{baseUrl}/bot<token>/<method>`: the token is in
 * the path, so error messages name the host only.
 */
import { z } from 'zod';
import {
  DEFAULT_TIMEOUT_MS,
  httpCall,
  isRecord,
  keptUnlessFailed,
  methodFailure,
  parseJson,
  parseRetryAfter,
  said,
  trimSlash,
  unexpectedAnswer,
  type Fail,
  type HttpAnswer,
} from './http';
import { splitText } from './text';
import {
  ChannelError,
  type ChannelOptions,
  type ChannelSender,
  type Delivery,
  type InboundMessage,
  type OutboundMessage,
} from './types';

type TelegramConnection = { readonly token: string };

/** Telegram refuses longer texts ("message is too long"); `deliver` sends longer answers in parts. */
const TELEGRAM_MAX_TEXT = 4096;

type TelegramPollOptions = {
  /** Long-poll time: Telegram holds the request up to this long when nothing is waiting. Default 30. */
  readonly timeoutSeconds?: number;
  /** At most this many updates (1–100, Telegram's default 100). */
  readonly limit?: number;
  readonly signal?: AbortSignal;
};

type TelegramPoll = {
  readonly messages: InboundMessage[];
  /**
   * The offset for the next poll: one past the last update seen, messages or not, so ignored updates
   * are confirmed too. Telegram forgets updates below the offset it is sent, so pass it only once
   * `messages` are safely recorded. `null` when nothing was ever seen.
   */
  readonly nextOffset: number | null;
};

type TelegramBot = { readonly id: string; readonly username: string | null; readonly name: string };

export type TelegramUpdate =
  | { readonly kind: 'message'; readonly message: InboundMessage }
  | { readonly kind: 'ignored'; readonly reason: string };

export interface TelegramChannel extends ChannelSender {
  readonly kind: 'telegram';
  /** One `getUpdates` long poll, starting at `offset` (`null`: whatever Telegram still holds). */
  poll(offset: number | null, options?: TelegramPollOptions): Promise<TelegramPoll>;
  /** One Update object (as `getUpdates` or a Telegram webhook delivers it). */
  parseUpdate(update: unknown): TelegramUpdate;
  /** The bot, from `getMe` (asked once, then cached; a failure is not cached). */
  me(signal?: AbortSignal): Promise<TelegramBot>;
  /**
   * `sendMessage` to `chatId`, replying to `inReplyTo` (a Telegram `message_id`; sent even if that
   * message is gone), in the forum topic `threadId` when given. Texts over 4096 characters go as
   * several messages, in order; a failure after the first part reports how many were sent, and a
   * retry sends them again. The externalId is `${chat_id}:${message_id}` of the first part.
   */
  deliver(message: OutboundMessage, signal?: AbortSignal): Promise<Delivery>;
}

const user = z.object({
  id: z.number(),
  is_bot: z.boolean().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});
const message = z.object({
  message_id: z.number(),
  from: user.optional(),
  sender_chat: z.object({ id: z.number(), title: z.string().optional() }).optional(),
  chat: z.object({ id: z.union([z.number(), z.string()]) }),
  date: z.number().optional(),
  text: z.string().optional(),
  message_thread_id: z.number().optional(),
  is_topic_message: z.boolean().optional(),
});
const update = z.object({ update_id: z.number().int() }).loose();

const displayName = (m: z.infer<typeof message>) => {
  const from = m.from;
  if (from?.username) return from.username;
  const full = [from?.first_name, from?.last_name].filter(Boolean).join(' ');
  if (full) return full;
  if (from) return String(from.id);
  return m.sender_chat?.title ?? (m.sender_chat ? String(m.sender_chat.id) : 'unknown');
};

export const parseTelegramUpdate = (raw: unknown): TelegramUpdate => {
  const parsed = update.safeParse(raw);
  if (!parsed.success) return { kind: 'ignored', reason: 'not an update (no update_id)' };
  const kinds = Object.keys(parsed.data).filter((k) => k !== 'update_id');
  if (!('message' in parsed.data))
    return { kind: 'ignored', reason: `update kind ${kinds.join(', ') || 'none'}` };
  const m = message.safeParse(parsed.data.message);
  if (!m.success) return { kind: 'ignored', reason: 'message without message_id or chat' };
  const { text } = m.data;
  if (text === undefined || !text.trim()) return { kind: 'ignored', reason: 'message without text' };
  return {
    kind: 'message',
    message: {
      chatId: String(m.data.chat.id),
      user: displayName(m.data),
      text,
      externalId: String(parsed.data.update_id),
      fromBot: m.data.from?.is_bot === true,
      threadId:
        m.data.is_topic_message && m.data.message_thread_id !== undefined
          ? String(m.data.message_thread_id)
          : null,
      messageId: String(m.data.message_id),
      receivedAt: m.data.date !== undefined ? new Date(m.data.date * 1000).toISOString() : undefined,
    },
  };
};

/** A Bot API answer that is not `ok`, as the ChannelError that says what to do about it. */
const botApiFailure = (answer: HttpAnswer, data: unknown, fail: Fail) => {
  const { status } = answer;
  if (!isRecord(data) || data.ok !== false)
    return status >= 500
      ? fail(`HTTP ${status}${said(answer.text)}`, { reason: 'unavailable', status })
      : unexpectedAnswer(answer, fail);
  const code = typeof data.error_code === 'number' ? data.error_code : status;
  const description = typeof data.description === 'string' ? data.description : `HTTP ${status}`;
  const parameters = isRecord(data.parameters) ? data.parameters : {};
  const retryAfterMs =
    typeof parameters.retry_after === 'number'
      ? parameters.retry_after * 1000
      : parseRetryAfter(answer.headers);
  const text = `${code} ${description}`;
  const details = { status, code: String(code), retryAfterMs };
  if (code === 429) return fail(text, { ...details, reason: 'rate_limited' });
  if (code >= 500) return fail(text, { ...details, reason: 'unavailable' });
  if (code === 401) return fail(text, { ...details, reason: 'unauthorized' });
  if (code === 409)
    // Another getUpdates took over (retrying takes it back), or a webhook is set (it stays so).
    return fail(text, {
      ...details,
      reason: 'conflict',
      retryable: /terminated by other/i.test(description),
    });
  return fail(text, { ...details, reason: 'rejected' });
};

/** The messages of a getUpdates result, and the offset that confirms them all. */
const updatesOf = (result: unknown[], offset: number | null): TelegramPoll => {
  const messages: InboundMessage[] = [];
  let nextOffset = offset;
  for (const raw of result) {
    if (isRecord(raw) && typeof raw.update_id === 'number' && Number.isInteger(raw.update_id))
      nextOffset = Math.max(nextOffset ?? raw.update_id + 1, raw.update_id + 1);
    const parsed = parseTelegramUpdate(raw);
    if (parsed.kind === 'message') messages.push(parsed.message);
  }
  return { messages, nextOffset };
};

/** sendMessage's parameters for one part of an answer: the first part replies to the message answered. */
const sendMessageParams = (out: OutboundMessage, text: string, first: boolean) => {
  const replyTo = out.inReplyTo !== null && /^\d+$/.test(out.inReplyTo) ? Number(out.inReplyTo) : undefined;
  const thread = out.threadId && /^\d+$/.test(out.threadId) ? Number(out.threadId) : undefined;
  return {
    chat_id: out.chatId,
    text,
    ...(thread !== undefined ? { message_thread_id: thread } : {}),
    ...(first && replyTo !== undefined
      ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }
      : {}),
  };
};

export const telegramChannel = (
  connection: TelegramConnection,
  options: ChannelOptions = {},
): TelegramChannel => {
  const { token } = connection;
  const baseUrl = trimSlash(options.baseUrl ?? 'https://api.telegram.org');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const doFetch = options.fetch ?? fetch;

  const fail = methodFailure('telegram', 'Telegram', [token]);

  /** One Bot API call; `result` when `ok`, a ChannelError otherwise. */
  const api = async (
    method: string,
    params: Record<string, unknown>,
    call: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<unknown> => {
    const answer = await httpCall({
      channel: 'telegram',
      what: `Telegram ${method}`,
      url: `${baseUrl}/bot${token}/${method}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
      timeoutMs: call.timeoutMs ?? timeoutMs,
      signal: call.signal,
      fetch: doFetch,
      maxBytes: 32 * 1024 * 1024,
    });
    const data = parseJson(answer.text);
    if (isRecord(data) && data.ok === true && answer.status === 200) return data.result;
    throw botApiFailure(answer, data, (text, details) => fail(method, text, details));
  };

  const poll = async (
    offset: number | null,
    pollOptions: TelegramPollOptions = {},
  ): Promise<TelegramPoll> => {
    const timeoutSeconds = Math.max(0, Math.floor(pollOptions.timeoutSeconds ?? 30));
    const result = await api(
      'getUpdates',
      {
        ...(offset !== null ? { offset } : {}),
        timeout: timeoutSeconds,
        ...(pollOptions.limit !== undefined ? { limit: pollOptions.limit } : {}),
      },
      // The HTTP deadline outlasts the long poll by the usual per-request timeout.
      { signal: pollOptions.signal, timeoutMs: timeoutSeconds * 1000 + timeoutMs },
    );
    if (!Array.isArray(result))
      throw fail('getUpdates', 'the result is not a list of updates', { reason: 'malformed', status: 200 });
    return updatesOf(result, offset);
  };

  const me = keptUnlessFailed((signal) =>
    api('getMe', {}, { signal }).then((result) => {
      const parsed = user.safeParse(result);
      if (!parsed.success)
        throw fail('getMe', 'the result is not a user', { reason: 'malformed', status: 200 });
      const u = parsed.data;
      return {
        id: String(u.id),
        username: u.username ?? null,
        name: [u.first_name, u.last_name].filter(Boolean).join(' ') || u.username || String(u.id),
      };
    }),
  );

  const deliver = async (out: OutboundMessage, signal?: AbortSignal): Promise<Delivery> => {
    if (!out.text.trim())
      throw fail('sendMessage', '400 Bad Request: message text is empty (the answer is empty)', {
        reason: 'rejected',
        code: '400',
      });
    const parts = splitText(out.text, TELEGRAM_MAX_TEXT);
    let first: string | null = null;
    for (const [i, text] of parts.entries()) {
      let result: unknown;
      try {
        result = await api('sendMessage', sendMessageParams(out, text, i === 0), { signal });
      } catch (error) {
        if (i === 0 || !(error instanceof ChannelError)) throw error;
        throw new ChannelError(
          'telegram',
          `${error.message} (after ${i} of ${parts.length} parts were sent)`,
          error,
        );
      }
      if (i === 0 && isRecord(result) && typeof result.message_id === 'number') {
        const chat = isRecord(result.chat) ? result.chat.id : undefined;
        first = `${typeof chat === 'number' || typeof chat === 'string' ? chat : out.chatId}:${result.message_id}`;
      }
    }
    return { externalId: first };
  };

  return { kind: 'telegram', poll, parseUpdate: parseTelegramUpdate, me, deliver };
};
