import { isRetryable, LlmError } from './errors';

export type RetryPolicy = {
  /** Further attempts after the first (0: none). */
  readonly maxRetries: number;
  /** First back-off; doubles each retry, with up to 25% jitter off. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** A provider asking for a longer wait than this is not waited for: the 429 is the answer. */
  readonly maxRetryAfterMs: number;
};

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/** `retry-after-ms` (OpenAI's), else `retry-after` in seconds or as an HTTP date. */
export const parseRetryAfter = (headers: Headers | undefined, now = Date.now()): number | undefined => {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = headers?.get('retry-after');
  if (!after) return undefined;
  if (Number.isFinite(Number(after))) return Math.max(0, Number(after) * 1000);
  const at = Date.parse(after);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
};

const backoffDelay = (policy: RetryPolicy, retry: number, random = Math.random) =>
  Math.min(policy.baseDelayMs * 2 ** retry, policy.maxDelayMs) * (1 - random() * 0.25);

/** Resolves after `ms`, or rejects with `aborted` as soon as the signal fires. */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new LlmError('aborted', 'the request was cancelled'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new LlmError('aborted', 'the request was cancelled'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or runs out of retries.
 * `attempt` receives how many retries came before it.
 */
export const withRetries = async <T>(
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  attempt: (retries: number) => Promise<T>,
): Promise<T> => {
  for (let retries = 0; ; retries++) {
    try {
      return await attempt(retries);
    } catch (error) {
      if (!(error instanceof LlmError) || !isRetryable(error) || retries >= policy.maxRetries) throw error;
      const asked = error.retryAfterMs;
      if (asked !== undefined && asked > policy.maxRetryAfterMs) throw error;
      await sleep(asked ?? backoffDelay(policy, retries), signal);
    }
  }
};
