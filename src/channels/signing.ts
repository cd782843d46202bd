/**
 * Request signing: HMAC-SHA256 over a timestamp and the raw body, checked in constant time and only
 * within a freshness window, so a captured request cannot be replayed later.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { headerOf } from './http';
import type { HeaderBag, Verification } from './types';

/** How far a signed request's timestamp may be from our clock, either way (Slack's rule: 5 minutes). */
const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

export const nowInSeconds = () => Math.floor(Date.now() / 1000);

const bytes = (body: Buffer | string) => (typeof body === 'string' ? Buffer.from(body, 'utf8') : body);

export const hmacSha256Hex = (secret: string, ...parts: (Buffer | string)[]) => {
  const hmac = createHmac('sha256', secret);
  for (const part of parts) hmac.update(bytes(part));
  return hmac.digest('hex');
};

/** Constant time for equal lengths; a length mismatch says nothing a valid signature's length does not. */
export const sameSignature = (given: string, expected: string) => {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
};

/** Reads a Unix-seconds timestamp header and checks it is fresh; `undefined` when it is. */
export const staleness = (
  raw: string | undefined,
  nowSeconds: number,
  header: string,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): string | undefined => {
  if (raw === undefined || raw === '') return `the ${header} header is missing`;
  if (!/^\d{1,12}$/.test(raw.trim())) return `the ${header} header is not a Unix timestamp`;
  const skew = Math.abs(nowSeconds - Number(raw.trim()));
  return skew > toleranceSeconds
    ? `the ${header} header is ${skew} s away from now (more than ${toleranceSeconds} s)`
    : undefined;
};

/** `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`: what our webhook deliveries carry. */
export const webhookSignature = (secret: string, timestamp: number | string, body: Buffer | string) =>
  `sha256=${hmacSha256Hex(secret, `${timestamp}.`, body)}`;

/**
 * Checks a webhook delivery's `X-Mindledger-Timestamp` and `X-Mindledger-Signature` against the raw
 * body, as a receiver should (and as tests do).
 */
export const verifyWebhookSignature = (
  secret: string,
  headers: HeaderBag,
  rawBody: Buffer | string,
  nowSeconds = nowInSeconds(),
): Verification => {
  const timestamp = headerOf(headers, 'x-mindledger-timestamp');
  const stale = staleness(timestamp, nowSeconds, 'X-Mindledger-Timestamp');
  if (stale) return { ok: false, reason: stale };
  const signature = headerOf(headers, 'x-mindledger-signature');
  if (!signature) return { ok: false, reason: 'the X-Mindledger-Signature header is missing' };
  return sameSignature(signature, webhookSignature(secret, timestamp!.trim(), rawBody))
    ? { ok: true, skipped: false }
    : { ok: false, reason: 'the X-Mindledger-Signature does not match the body' };
};
