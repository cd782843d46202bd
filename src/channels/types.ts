/**
 * The channel engine's contract: what a chat platform (Slack, Telegram, a generic webhook) hands us
 * and what we hand it. Adapters speak the platforms' HTTP protocols and know no capability; the
 * chatbot worker decides what to do with messages (dedupe, answer, record).
 */

export type ChannelKind = 'slack' | 'telegram' | 'webhook';

export type InboundMessage = {
  /** Slack channel id / Telegram chat id / the webhook body's `chat_id`. */
  readonly chatId: string;
  /** Who wrote it, for display: Slack user id, Telegram @username (or first name), the webhook's `user`. */
  readonly user: string;
  readonly text: string;
  /**
   * The dedupe key for exactly-once processing, stable across the platform's redeliveries:
   * Slack `${channel}:${ts}` (a retried event and the `message`/`app_mention` pair for one post share
   * it), Telegram `${update_id}`, the webhook body's `message_id` when given.
   */
  readonly externalId: string | null;
  /** Written by this bot or any other bot: never answered. */
  readonly fromBot: boolean;
  /** Slack `thread_ts` / Telegram forum topic (`message_thread_id`): the answer goes to the same thread. */
  readonly threadId?: string | null;
  /**
   * The platform's own id of this message, what an answer names in `OutboundMessage.inReplyTo`:
   * Telegram `message_id` (the reply quotes it), Slack `ts`, the webhook body's `message_id`.
   * Not the dedupe key: a Telegram `message_id` is only unique within its chat.
   */
  readonly messageId?: string | null;
  /** ISO 8601, from the platform's own timestamp when it has one. */
  readonly receivedAt?: string;
};

export type OutboundMessage = {
  readonly chatId: string;
  readonly text: string;
  /** Our id for this answer: the webhook's `Idempotency-Key`, so a receiver can drop redeliveries. */
  readonly answerId: string;
  /** The `messageId` of the message answered (Telegram replies to it; Slack uses `threadId` instead). */
  readonly inReplyTo: string | null;
  readonly threadId?: string | null;
};

/** The platform's id of what was posted (`${channel}:${ts}`, `${chat_id}:${message_id}`), when it says. */
export type Delivery = { readonly externalId: string | null };

export interface ChannelSender {
  readonly kind: ChannelKind;
  /**
   * Posts one answer. Throws `ChannelError`: `retryable` says whether the same call may succeed later
   * (after `retryAfterMs` when the platform said so). A timeout is retryable but ambiguous: the platform
   * may have posted it, so a retry can post twice (webhook receivers can dedupe on `Idempotency-Key`).
   */
  deliver(message: OutboundMessage, signal?: AbortSignal): Promise<Delivery>;
}

/** Why a call failed; `retryable` follows from it (see `ChannelError`). */
export type ChannelFailure =
  /** The platform asks us to slow down (HTTP 429, Slack `ratelimited`): retryable, often with a delay. */
  | 'rate_limited'
  /** The platform failed (5xx, Slack `internal_error`): retryable. */
  | 'unavailable'
  /** No answer within the timeout: retryable, and the call may have taken effect. */
  | 'timeout'
  /** Could not connect, or the connection broke: retryable. */
  | 'network'
  /** The caller's signal fired (shutdown): retryable, the outcome is unknown. */
  | 'aborted'
  /** The token or secret is wrong or revoked: permanent until the configuration changes. */
  | 'unauthorized'
  /** Telegram: another getUpdates (another process) took over the updates. */
  | 'conflict'
  /** The platform refused this request (unknown channel, not a member, bad input): permanent. */
  | 'rejected'
  /** The answer was not the protocol's (not JSON, a redirect): permanent. */
  | 'malformed';

const RETRYABLE: Readonly<Record<ChannelFailure, boolean>> = {
  rate_limited: true,
  unavailable: true,
  timeout: true,
  network: true,
  aborted: true,
  conflict: true,
  unauthorized: false,
  rejected: false,
  malformed: false,
};

export type ChannelErrorDetails = {
  readonly reason: ChannelFailure;
  /** Overrides the reason's default (Telegram's "webhook is active" conflict is permanent). */
  readonly retryable?: boolean;
  /** The HTTP status, when there was an answer. */
  readonly status?: number;
  /** How long the platform asked us to wait before trying again. */
  readonly retryAfterMs?: number;
  /** The platform's own error code: Slack `error` (`channel_not_found`), Telegram `error_code`. */
  readonly code?: string;
};

/**
 * A channel call that failed. The message names the channel and the call ("Slack chat.postMessage
 * failed: channel_not_found") and never quotes a token.
 */
export class ChannelError extends Error {
  readonly channel: ChannelKind;
  readonly reason: ChannelFailure;
  readonly retryable: boolean;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly code?: string;

  constructor(channel: ChannelKind, message: string, details: ChannelErrorDetails) {
    super(message);
    this.name = 'ChannelError';
    this.channel = channel;
    this.reason = details.reason;
    this.retryable = details.retryable ?? RETRYABLE[details.reason];
    if (details.status !== undefined) this.status = details.status;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
    if (details.code !== undefined) this.code = details.code;
  }
}

export const isChannelError = (error: unknown): error is ChannelError => error instanceof ChannelError;

/** What every adapter factory takes besides its connection parameters. */
export type ChannelOptions = {
  /** The platform's API root (tests point it at a local stub). */
  readonly baseUrl?: string;
  /** Per request; Telegram's long poll adds its own `timeout` on top. Default 10 s. */
  readonly timeoutMs?: number;
  /** Defaults to the global fetch (undici). */
  readonly fetch?: typeof fetch;
};

/** Request headers as express (`req.headers`, lower-case keys) or fetch (`Headers`) hold them. */
export type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The outcome of checking an inbound request's signature; `reason` is safe to log. */
export type Verification =
  | {
      readonly ok: true;
      /** No secret is configured: the request was not checked. */ readonly skipped: boolean;
    }
  | { readonly ok: false; readonly reason: string };
