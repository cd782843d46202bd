type BackoffOptions = {
  /** The ceiling of the first retry's delay. Default 1 s. */
  readonly baseMs?: number;
  /** No delay exceeds this. Default 60 s. */
  readonly maxMs?: number;
  /** A number in [0, 1): `Math.random` by default, a fixed sequence in tests. */
  readonly jitter?: () => number;
};

/**
 * The delay before retry number `attempt` (0 for the first retry): exponential with full jitter,
 * uniformly in [0, min(maxMs, baseMs · 2^attempt)), so many workers retrying at once spread out.
 */
export const backoff = (attempt: number, options: BackoffOptions = {}): number => {
  const { baseMs = 1000, maxMs = 60_000, jitter = Math.random } = options;
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.floor(attempt)));
  const r = Math.min(Math.max(jitter(), 0), 1);
  return Math.floor(ceiling * r);
};

/**
 * The delay before retry number `attempt` after `error`: the wait its platform or provider asked
 * for (a positive `retryAfterMs`, from `Retry-After`), else `backoffOf(attempt)`.
 */
export const retryDelay = (
  error: unknown,
  attempt: number,
  backoffOf: (attempt: number) => number,
): number => {
  const asked = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof asked === 'number' && asked > 0 ? asked : backoffOf(attempt);
};
