/**
 * Slack: inbound messages arrive as Events API callbacks (signed POSTs to our webhook route);
 * answers go out through the Web API's `chat.postMessage`. Slack answers HTTP 200 with
 * `{ok: false, error}` for most failures, so the body, not the status, says what went wrong.
 */
import { z } from 'zod';
import {
  DEFAULT_TIMEOUT_MS,
  headerOf,
  httpCall,
  isRecord,
  keptUnlessFailed,
  methodFailure,
  parseJson,
  parseRetryAfter,
  trimSlash,
  unexpectedAnswer,
  type Fail,
  type HttpAnswer,
} from './http';
import { hmacSha256Hex, nowInSeconds, sameSignature, staleness } from './signing';
import {
  type ChannelFailure,
  type ChannelOptions,
  type ChannelSender,
  type Delivery,
  type HeaderBag,
  type InboundMessage,
  type OutboundMessage,
  type Verification,
} from './types';

type SlackConnection = {
  /** The bot token (`xoxb-…`). */
  readonly token: string;
  /** The app's signing secret; without it inbound requests are not verified (see `verify`). */
  readonly signing_secret?: string | null;
};

type SlackInbound =
  /** Slack checks the endpoint when it is configured: answer 200 with the challenge. */
  | { readonly kind: 'challenge'; readonly challenge: string }
  | { readonly kind: 'message'; readonly message: InboundMessage; readonly eventId: string | null }
  /** A genuine callback with nothing to answer (an edit, a join, another event type): answer 200. */
  | { readonly kind: 'ignored'; readonly reason: string }
  /** Not an Events API payload: answer 400. */
  | { readonly kind: 'invalid'; readonly reason: string };

export interface SlackChannel extends ChannelSender {
  readonly kind: 'slack';
  /**
   * Slack request signing: `X-Slack-Signature` is `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>`
   * under the signing secret, and `X-Slack-Request-Timestamp` is within 5 minutes of `nowSeconds`.
   * With no `signing_secret` configured nothing is checked (`{ ok: true, skipped: true }`): anyone who
   * knows the webhook URL can then post messages, so configure one in production.
   */
  verify(headers: HeaderBag, rawBody: Buffer | string, nowSeconds?: number): Verification;
  /**
   * An Events API payload (already JSON-parsed) as what to do with it. `botUserId` (from `botUserId()`,
   * else the one learnt from an earlier call, else the payload's bot authorization) marks the bot's
   * own messages and is stripped from the start of the text ("<@U0BOT> how many orders?").
   */
  parse(body: unknown, context?: { readonly botUserId?: string | null }): SlackInbound;
  /** The bot's own user id, from `auth.test` (asked once, then cached; a failure is not cached). */
  botUserId(signal?: AbortSignal): Promise<string>;
  /** `chat.postMessage` to `chatId`, in the thread `threadId` when given. `inReplyTo` is not used. */
  deliver(message: OutboundMessage, signal?: AbortSignal): Promise<Delivery>;
}

/** Slack's errors worth trying again; any other `error` is permanent. */
const SLACK_RETRYABLE: Readonly<Record<string, ChannelFailure>> = {
  ratelimited: 'rate_limited',
  rate_limited: 'rate_limited',
  message_limit_exceeded: 'rate_limited',
  internal_error: 'unavailable',
  fatal_error: 'unavailable',
  service_unavailable: 'unavailable',
  request_timeout: 'unavailable',
  team_added_to_org: 'unavailable',
};
const SLACK_AUTH = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'missing_scope',
  'not_allowed_token_type',
]);

/** Message subtypes that are someone saying something; every other subtype is an edit, a join, … */
const SPOKEN_SUBTYPES = new Set(['bot_message', 'file_share', 'thread_broadcast', 'me_message']);

const messageEvent = z.object({
  type: z.enum(['message', 'app_mention']),
  subtype: z.string().optional(),
  channel: z.string().min(1),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  username: z.string().optional(),
  text: z.string().optional(),
  ts: z.string().min(1),
  thread_ts: z.string().optional(),
});

const callback = z.object({
  type: z.literal('event_callback'),
  event_id: z.string().optional(),
  event: z.object({ type: z.string(), subtype: z.string().optional() }).loose(),
  authorizations: z
    .array(z.object({ user_id: z.string().optional(), is_bot: z.boolean().optional() }))
    .optional(),
});

/** Slack's `ts` ("1700000000.000100", seconds) as ISO 8601. */
const tsToIso = (ts: string) => {
  const ms = Number(ts) * 1000;
  return Number.isFinite(ms) && ms > 0 ? new Date(Math.floor(ms)).toISOString() : undefined;
};

const stripMention = (text: string, userId: string | undefined) => {
  if (!userId) return text;
  const escaped = userId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const mention = new RegExp(`^\\s*<@${escaped}(\\|[^>]*)?>[\\s:,]*`);
  return text.replace(mention, '');
};

/** A Web API answer's body when `ok`; otherwise the ChannelError that says what to do about it. */
const webApiResult = (answer: HttpAnswer, fail: Fail) => {
  const data = parseJson(answer.text);
  const error = isRecord(data) && typeof data.error === 'string' ? data.error : undefined;
  const retryAfterMs = parseRetryAfter(answer.headers);
  const { status } = answer;
  if (status === 429)
    throw fail(`${error ?? 'ratelimited'} (HTTP 429)`, {
      reason: 'rate_limited',
      status,
      retryAfterMs,
      code: error ?? 'ratelimited',
    });
  if (status >= 500)
    throw fail(`HTTP ${status}${error ? ` ${error}` : ''}`, {
      reason: 'unavailable',
      status,
      retryAfterMs,
      code: error,
    });
  if (status !== 200 || !isRecord(data) || typeof data.ok !== 'boolean') throw unexpectedAnswer(answer, fail);
  if (data.ok) return data;
  const code = error ?? 'unknown_error';
  const reason: ChannelFailure =
    SLACK_RETRYABLE[code] ?? (SLACK_AUTH.has(code) ? 'unauthorized' : 'rejected');
  throw fail(code, { reason, status, retryAfterMs, code });
};

/** Slack's request signature (v0: HMAC-SHA256 of the timestamp and body), checked when a signing secret is set. */
const verifySignature = (
  signingSecret: string | undefined,
  headers: HeaderBag,
  rawBody: Buffer | string,
  nowSeconds: number,
): Verification => {
  if (!signingSecret) return { ok: true, skipped: true };
  const timestamp = headerOf(headers, 'x-slack-request-timestamp');
  const stale = staleness(timestamp, nowSeconds, 'X-Slack-Request-Timestamp');
  if (stale) return { ok: false, reason: stale };
  const signature = headerOf(headers, 'x-slack-signature');
  if (!signature) return { ok: false, reason: 'the X-Slack-Signature header is missing' };
  const expected = `v0=${hmacSha256Hex(signingSecret, `v0:${timestamp!.trim()}:`, rawBody)}`;
  return sameSignature(signature, expected)
    ? { ok: true, skipped: false }
    : { ok: false, reason: 'the X-Slack-Signature does not match the body' };
};

/** An Events API payload: a message to answer (the bot's own posts marked), a URL check, or nothing to answer. */
const parseSlackEvent = (body: unknown, botUserId: string | null | undefined): SlackInbound => {
  if (!isRecord(body) || typeof body.type !== 'string')
    return { kind: 'invalid', reason: 'not a Slack Events API payload' };
  if (body.type === 'url_verification')
    return typeof body.challenge === 'string' && body.challenge
      ? { kind: 'challenge', challenge: body.challenge }
      : { kind: 'invalid', reason: 'url_verification without a challenge' };
  if (body.type !== 'event_callback') return { kind: 'ignored', reason: `payload type ${body.type}` };
  const envelope = callback.safeParse(body);
  if (!envelope.success) return { kind: 'invalid', reason: 'event_callback without a valid event' };
  const { event, event_id: eventId, authorizations } = envelope.data;
  if (event.type !== 'message' && event.type !== 'app_mention')
    return { kind: 'ignored', reason: `event type ${event.type}` };
  if (event.subtype !== undefined && !SPOKEN_SUBTYPES.has(event.subtype))
    return { kind: 'ignored', reason: `message subtype ${event.subtype}` };
  const parsed = messageEvent.safeParse(event);
  if (!parsed.success) return { kind: 'invalid', reason: `${event.type} event without a channel or ts` };
  const m = parsed.data;
  const ownId = botUserId ?? authorizations?.find((a) => a.is_bot === true)?.user_id;
  const text = stripMention(m.text ?? '', ownId ?? undefined);
  if (!text.trim()) return { kind: 'ignored', reason: 'message without text' };
  const fromBot = m.bot_id !== undefined || m.subtype === 'bot_message' || (!!ownId && m.user === ownId);
  return {
    kind: 'message',
    eventId: eventId ?? null,
    message: {
      chatId: m.channel,
      user: m.user ?? m.username ?? m.bot_id ?? 'unknown',
      text,
      // Not event_id: Slack sends one post as both `message` and `app_mention` (two event ids), and
      // the bot's own posts come back with the channel and ts `deliver` returned.
      externalId: `${m.channel}:${m.ts}`,
      fromBot,
      threadId: m.thread_ts ?? null,
      messageId: m.ts,
      receivedAt: tsToIso(m.ts),
    },
  };
};

export const slackChannel = (connection: SlackConnection, options: ChannelOptions = {}): SlackChannel => {
  const { token } = connection;
  const signingSecret = connection.signing_secret || undefined;
  const baseUrl = trimSlash(options.baseUrl ?? 'https://slack.com/api');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const doFetch = options.fetch ?? fetch;
  let knownBotUserId: string | undefined;

  const fail = methodFailure('slack', 'Slack', [token, signingSecret]);

  /** One Web API call; the answer's body when `ok`, a ChannelError otherwise. */
  const api = async (method: string, args: Record<string, unknown>, signal?: AbortSignal) => {
    const answer = await httpCall({
      channel: 'slack',
      what: `Slack ${method}`,
      url: `${baseUrl}/${method}`,
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json; charset=utf-8',
      },
      body: JSON.stringify(args),
      timeoutMs,
      signal,
      fetch: doFetch,
    });
    return webApiResult(answer, (message, details) => fail(method, message, details));
  };

  const botUserId = keptUnlessFailed((signal) =>
    api('auth.test', {}, signal).then((data) => {
      if (typeof data.user_id !== 'string' || !data.user_id)
        throw fail('auth.test', 'the answer has no user_id', { reason: 'malformed', status: 200 });
      knownBotUserId = data.user_id;
      return data.user_id;
    }),
  );

  const verify = (headers: HeaderBag, rawBody: Buffer | string, nowSeconds = nowInSeconds()) =>
    verifySignature(signingSecret, headers, rawBody, nowSeconds);

  const parse = (body: unknown, context: { readonly botUserId?: string | null } = {}) =>
    parseSlackEvent(body, context.botUserId ?? knownBotUserId);

  const deliver = async (message: OutboundMessage, signal?: AbortSignal): Promise<Delivery> => {
    if (!message.text.trim())
      throw fail('chat.postMessage', 'no_text (the answer is empty)', {
        reason: 'rejected',
        code: 'no_text',
      });
    const data = await api(
      'chat.postMessage',
      {
        channel: message.chatId,
        text: message.text,
        ...(message.threadId ? { thread_ts: message.threadId } : {}),
      },
      signal,
    );
    const channel = typeof data.channel === 'string' ? data.channel : message.chatId;
    return { externalId: typeof data.ts === 'string' ? `${channel}:${data.ts}` : null };
  };

  return { kind: 'slack', verify, parse, botUserId, deliver };
};
