import { causeCode } from '../../shared/errors';
import { LlmError, providerDetail } from './errors';
import { openAiSdk } from './openaiSdk';
import { parseRetryAfter } from './retry';

/** Where the provider is, for messages: scheme, host and path only (no credentials, no query). */
export const safeBaseUrl = (raw: string) => {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/$/, '');
  } catch {
    return 'the configured base_url';
  }
};

/** Who the failure is about: the provider's address as shown, and the secrets its text must not quote. */
type ProviderIdentity = { readonly where: string; readonly secrets: readonly (string | undefined)[] };

/** Whatever the SDK threw, as an LlmError with a kind and a message written here (never the key). */
export const toLlmError = (
  error: unknown,
  model: string | undefined,
  provider: ProviderIdentity,
): LlmError => {
  const { where, secrets } = provider;
  if (error instanceof LlmError) return error;
  const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = openAiSdk();
  if (error instanceof APIUserAbortError) return new LlmError('aborted', 'the request was cancelled');
  if (error instanceof APIConnectionTimeoutError)
    return new LlmError('timeout', `the provider at ${where} did not answer in time`);
  if (error instanceof APIConnectionError) {
    const code = causeCode(error);
    return new LlmError(
      'unreachable',
      `could not reach the provider at ${where}${code ? ` (${code})` : ''}: check base_url and that the server is running`,
    );
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const status = error.status;
    const detail = providerDetail(
      typeof error.error === 'object' && error.error !== null && 'message' in error.error
        ? String(error.error.message)
        : error.message,
      secrets,
    );
    const suffix = detail ? `: ${detail}` : '';
    if (status === 401 || status === 403)
      return new LlmError('authentication', `the provider rejected the API key (HTTP ${status})`, status);
    if (status === 429)
      return new LlmError(
        'rate_limit',
        `the provider is rate limiting requests (HTTP 429)${suffix}`,
        status,
        parseRetryAfter(error.headers),
      );
    if (status === 404)
      return new LlmError(
        'not_found',
        `the provider at ${where} does not know model '${model ?? '?'}' (HTTP 404)${suffix}`,
        status,
      );
    if (status === 408) return new LlmError('timeout', `the provider timed out (HTTP 408)${suffix}`, status);
    if (status >= 500)
      return new LlmError('provider_error', `the provider failed (HTTP ${status})${suffix}`, status);
    return new LlmError('bad_request', `the provider refused the request (HTTP ${status})${suffix}`, status);
  }
  const reason =
    typeof error === 'object' && error !== null && 'message' in error
      ? providerDetail(String(error.message), secrets)
      : 'unknown error';
  return new LlmError('provider_error', `the provider's answer was cut off or malformed (${reason})`);
};
