import { badGateway, gatewayTimeout, invalid, tooManyRequests, type DomainError } from '../../shared/errors';

/**
 * Errors from talking to a provider, with a kind the HTTP layer and the agent loop can switch on.
 * Messages are written here, never copied whole from the provider: OpenAI's 401 body quotes part
 * of the key, and a gateway may echo headers. What we do keep of a provider's text is redacted.
 */
export type LlmErrorKind =
  | 'authentication'
  | 'rate_limit'
  | 'timeout'
  | 'unreachable'
  | 'bad_request'
  | 'provider_error'
  | 'not_found'
  | 'aborted';

export class LlmError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    /** The provider's HTTP status, when it answered. */
    readonly status?: number,
    /** For `rate_limit`: what the provider asked us to wait, in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

export const isLlmError = (error: unknown): error is LlmError => error instanceof LlmError;

/**
 * A provider's failure as an HTTP problem: which side failed. A time-out and a cancellation are
 * named by the caller (an agent run, a SQL query), whose they are.
 */
export const providerProblem = (
  kind: LlmErrorKind,
  detail: string,
  own: { readonly timedOut: string; readonly aborted: { readonly title: string; readonly detail: string } },
): DomainError => {
  switch (kind) {
    case 'authentication':
      return badGateway(detail, 'LLM provider rejected the API key');
    case 'unreachable':
      return badGateway(detail, 'LLM provider unreachable');
    case 'provider_error':
      return badGateway(detail, 'LLM provider error');
    case 'timeout':
      return gatewayTimeout(detail, own.timedOut);
    case 'rate_limit':
      return tooManyRequests(detail, 10, 'LLM provider rate limit');
    case 'bad_request':
      return invalid(detail, 'LLM provider refused the request');
    case 'not_found':
      return invalid(detail, 'Unknown LLM model');
    case 'aborted':
      return invalid(own.aborted.detail, own.aborted.title);
    default: {
      const _exhaustive: never = kind;
      return _exhaustive;
    }
  }
};

/** 429 and 5xx are worth another attempt; every other 4xx will fail the same way again. */
export const isRetryable = (error: LlmError) =>
  error.kind === 'rate_limit' || (error.kind === 'provider_error' && (error.status ?? 0) >= 500);

/** Why an agent's LLM settings cannot be turned into a client: the lead maps these to 400. */
type LlmConfigErrorKind = 'unsupported_provider' | 'missing_model' | 'missing_base_url' | 'unknown_engine';

export class LlmConfigError extends Error {
  constructor(
    readonly kind: LlmConfigErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'LlmConfigError';
  }
}

export const isLlmConfigError = (error: unknown): error is LlmConfigError => error instanceof LlmConfigError;

const MIN_SECRET_LENGTH = 4;

/**
 * Removes the secrets, anything after `Bearer `, and key-shaped tokens (`sk-…`, OpenAI's
 * `sk-proj-****abcd` quotes) from a text that came from outside.
 */
const redactSecrets = (text: string, secrets: readonly (string | undefined)[]): string => {
  let out = text;
  for (const secret of secrets)
    if (secret && secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join('******');
  return out
    .replace(/(bearer\s+)\S+/gi, '$1******')
    .replace(/\bsk-[A-Za-z0-9_*.-]{6,}/g, 'sk-******')
    .replace(/(api[-_ ]?key["'\s:=]+)[^\s"',}]{6,}/gi, '$1******');
};

/** Short, single-line, bounded: provider messages can be whole HTML error pages. */
export const providerDetail = (text: string | undefined, secrets: readonly (string | undefined)[]) => {
  if (!text) return '';
  const oneLine = redactSecrets(text, secrets).replace(/\s+/g, ' ').trim();
  return oneLine.length > 300 ? `${oneLine.slice(0, 300)}…` : oneLine;
};
