/**
 * The one way adapters talk HTTP: the global fetch with a deadline and the caller's signal, the answer
 * read in full (up to a cap), and transport failures turned into `ChannelError`s whose messages name
 * the host only (Telegram puts the token in the path).
 */
import { causeCode, isDomainError } from '../shared/errors';
import { ChannelError, type ChannelErrorDetails, type ChannelKind, type HeaderBag } from './types';

export const DEFAULT_TIMEOUT_MS = 10_000;

export type HttpAnswer = { readonly status: number; readonly headers: Headers; readonly text: string };

type HttpCall = {
  readonly channel: ChannelKind;
  /** What is being called, as error messages name it: "Slack chat.postMessage". */
  readonly what: string;
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly fetch: typeof fetch;
  /** The answer's body is read up to this many bytes (the rest is dropped). Default 4 MiB. */
  readonly maxBytes?: number;
};

const readCapped = async (response: Response, maxBytes: number): Promise<string> => {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - size;
    chunks.push(value.byteLength > room ? value.subarray(0, room) : value);
    size += Math.min(value.byteLength, room);
    if (size >= maxBytes) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
};

/**
 * One request. The deadline covers connecting, the headers and the body. It is a timer and a listener
 * removed when the call ends (not `AbortSignal.any`, which keeps every call attached to a long-lived
 * caller signal, such as a poll loop's, until that signal is collected).
 */
export const httpCall = async (spec: HttpCall): Promise<HttpAnswer> => {
  const { channel, what, timeoutMs, signal: caller } = spec;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  if (caller?.aborted) controller.abort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await spec.fetch(spec.url, {
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
      signal: controller.signal,
      // A redirect of a POST turns into a GET without the body: an answer to report, not to follow.
      redirect: 'manual',
    });
    const text = await readCapped(response, spec.maxBytes ?? 4 * 1024 * 1024);
    return { status: response.status, headers: response.headers, text };
  } catch (error) {
    if (caller?.aborted) throw new ChannelError(channel, `${what} was cancelled`, { reason: 'aborted' });
    // The outbound policy (OUTBOUND_ALLOW) refused the destination: nothing was sent, and never will be.
    if (isDomainError(error))
      throw new ChannelError(channel, `${what} refused: ${error.detail}`, {
        reason: 'rejected',
        retryable: false,
      });
    if (timedOut)
      throw new ChannelError(channel, `${what} failed: no answer within ${timeoutMs} ms`, {
        reason: 'timeout',
      });
    const code = causeCode(error);
    throw new ChannelError(
      channel,
      `${what} failed: could not reach ${hostOf(spec.url)}${code ? ` (${code})` : ''}`,
      { reason: 'network' },
    );
  } finally {
    clearTimeout(timer);
    caller?.removeEventListener('abort', onAbort);
  }
};

/** Scheme and host: enough to say where, never a path (tokens) or a query. */
const hostOf = (raw: string) => {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}`;
  } catch {
    return 'the configured URL';
  }
};

/** Scheme, host and path, for URLs whose path is not secret (a webhook's). */
export const safeUrl = (raw: string) => {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return 'the configured URL';
  }
};

export const trimSlash = (url: string) => url.replace(/\/+$/, '');

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `Retry-After` in seconds or as an HTTP date, in milliseconds. */
export const parseRetryAfter = (headers: Headers, now = Date.now()): number | undefined => {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
};

/** Replaces each secret in text the platform sent back, before it goes into an error message. */
const redact = (text: string, secrets: readonly (string | null | undefined)[]) =>
  secrets.reduce<string>((out, s) => (s ? out.split(s).join('***') : out), text);

/** What a body said, for an error message: `: ` and a short single-line excerpt (secrets replaced), or nothing. */
export const said = (text: string, secrets: readonly (string | null | undefined)[] = [], max = 200) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return text ? `: ${redact(line.length > max ? `${line.slice(0, max)}…` : line, secrets)}` : '';
};

/** What makes the ChannelError of a platform's answer, from what it says. */
export type Fail = (text: string, details: ChannelErrorDetails) => ChannelError;

/** The failures of a platform's API methods ("Slack chat.postMessage failed: …"), the connection's secrets replaced. */
export const methodFailure =
  (channel: ChannelKind, platform: string, secrets: readonly (string | undefined)[]) =>
  (method: string, text: string, details: ChannelErrorDetails) =>
    new ChannelError(channel, redact(`${platform} ${method} failed: ${text}`, secrets), details);

/** An answer that is neither the platform's own error nor a server failure: refused (3xx, 4xx) or malformed. */
export const unexpectedAnswer = (answer: HttpAnswer, fail: Fail) =>
  fail(`unexpected answer (HTTP ${answer.status}${said(answer.text)})`, {
    reason: answer.status >= 300 && answer.status < 500 ? 'rejected' : 'malformed',
    status: answer.status,
  });

/** What `ask` answers, asked once and then kept; a failure is not kept (the next call asks again). */
export const keptUnlessFailed = <T>(ask: (signal?: AbortSignal) => Promise<T>) => {
  let kept: Promise<T> | undefined;
  return (signal?: AbortSignal) => {
    kept ??= ask(signal);
    const pending = kept;
    pending.catch(() => {
      if (kept === pending) kept = undefined;
    });
    return pending;
  };
};

/** A header's first value, whatever the bag's shape and the name's case. */
export const headerOf = (headers: HeaderBag, name: string): string | undefined => {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(
    headers as Record<string, string | readonly string[] | undefined>,
  ))
    if (key.toLowerCase() === lower) return typeof value === 'string' ? value : value?.[0];
  return undefined;
};
