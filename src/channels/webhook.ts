/**
 * A generic webhook: answers are POSTed as JSON to a URL the user configured, signed when a secret
 * is, and carry an `Idempotency-Key` so the receiver can drop our redeliveries. Inbound messages
 * come to our webhook route as `{chat_id, user, text, message_id?, thread_id?}`.
 */
import { z } from 'zod';
import { VERSION } from '../shared/version';
import { DEFAULT_TIMEOUT_MS, httpCall, isRecord, parseJson, parseRetryAfter, safeUrl, said } from './http';
import { nowInSeconds, webhookSignature } from './signing';
import {
  ChannelError,
  type ChannelFailure,
  type ChannelSender,
  type Delivery,
  type InboundMessage,
  type OutboundMessage,
} from './types';

export { verifyWebhookSignature, webhookSignature } from './signing';

type WebhookConnection = {
  /** Where answers are POSTed. */
  readonly url: string;
  /** Signs each delivery (`X-Mindledger-Signature`); without one, deliveries are not signed. */
  readonly secret?: string | null;
};

type WebhookOptions = {
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
  /** The clock for `X-Mindledger-Timestamp`, in Unix seconds. */
  readonly nowSeconds?: () => number;
};

/** What the receiver gets, as JSON. */
type WebhookDelivery = {
  readonly chat_id: string;
  readonly text: string;
  readonly answer_id: string;
  readonly in_reply_to: string | null;
  readonly thread_id: string | null;
};

export interface WebhookChannel extends ChannelSender {
  readonly kind: 'webhook';
  /**
   * POSTs the answer. 2xx: delivered (the externalId is the receiver's `message_id` or `id`, if its
   * JSON answer has one). 408, 429 and 5xx: retryable, after `Retry-After` when given. A redirect or
   * any other 4xx: permanent (401/403 as `unauthorized`: the receiver refuses our signature).
   */
  deliver(message: OutboundMessage, signal?: AbortSignal): Promise<Delivery>;
}

export const webhookChannel = (
  connection: WebhookConnection,
  options: WebhookOptions = {},
): WebhookChannel => {
  const { url } = connection;
  const secret = connection.secret || undefined;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const clock = options.nowSeconds ?? nowInSeconds;
  const where = safeUrl(url);
  const what = `Webhook POST ${where}`;

  const deliver = async (message: OutboundMessage, signal?: AbortSignal): Promise<Delivery> => {
    const payload: WebhookDelivery = {
      chat_id: message.chatId,
      text: message.text,
      answer_id: message.answerId,
      in_reply_to: message.inReplyTo,
      thread_id: message.threadId ?? null,
    };
    const body = JSON.stringify(payload);
    const timestamp = String(clock());
    const answer = await httpCall({
      channel: 'webhook',
      what,
      url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': `mindledger/${VERSION}`,
        'idempotency-key': message.answerId,
        'x-mindledger-timestamp': timestamp,
        ...(secret ? { 'x-mindledger-signature': webhookSignature(secret, timestamp, body) } : {}),
      },
      body,
      timeoutMs,
      signal,
      fetch: options.fetch ?? fetch,
      maxBytes: 64 * 1024,
    });
    const { status } = answer;
    if (status >= 200 && status < 300) {
      const data = parseJson(answer.text);
      const id = isRecord(data) ? (data.message_id ?? data.id) : undefined;
      return { externalId: typeof id === 'string' || typeof id === 'number' ? String(id) : null };
    }
    if (status >= 300 && status < 400) {
      const location = answer.headers.get('location');
      const target = location
        ? safeUrl(URL.canParse(location, url) ? new URL(location, url).href : location)
        : '';
      throw new ChannelError(
        'webhook',
        `${what} failed: HTTP ${status} redirect${target ? ` to ${target}` : ''} (configure the final URL)`,
        { reason: 'rejected', status },
      );
    }
    const reason: ChannelFailure =
      status === 429
        ? 'rate_limited'
        : status === 408
          ? 'timeout'
          : status >= 500
            ? 'unavailable'
            : status === 401 || status === 403
              ? 'unauthorized'
              : 'rejected';
    throw new ChannelError('webhook', `${what} failed: HTTP ${status}${said(answer.text, [secret])}`, {
      reason,
      status,
      retryAfterMs: parseRetryAfter(answer.headers),
    });
  };

  return { kind: 'webhook', deliver };
};

/** The body our inbound webhook route takes (MindsDB's `{chat_id, user, text}`, plus optional ids). */
export const webhookInboundBody = z.object({
  chat_id: z.union([z.string().min(1), z.number()]),
  user: z.string().min(1).optional(),
  text: z.string(),
  message_id: z.union([z.string().min(1), z.number()]).optional(),
  thread_id: z
    .union([z.string().min(1), z.number()])
    .nullable()
    .optional(),
  from_bot: z.boolean().optional(),
});
type WebhookInboundBody = z.infer<typeof webhookInboundBody>;

/** A validated inbound body as an InboundMessage (the route validates with `webhookInboundBody`). */
export const webhookInbound = (body: WebhookInboundBody, receivedAt?: string): InboundMessage => ({
  chatId: String(body.chat_id),
  user: body.user ?? 'anonymous',
  text: body.text,
  externalId: body.message_id !== undefined ? String(body.message_id) : null,
  fromBot: body.from_bot === true,
  threadId: body.thread_id !== undefined && body.thread_id !== null ? String(body.thread_id) : null,
  messageId: body.message_id !== undefined ? String(body.message_id) : null,
  ...(receivedAt ? { receivedAt } : {}),
});
