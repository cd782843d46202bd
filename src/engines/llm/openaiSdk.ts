import type * as OpenAiSdk from 'openai';

/**
 * The OpenAI SDK, loaded by the first provider client or provider error rather than at start: it is
 * about 150 modules, which a process (or a spec file) that never calls a provider does not need.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const openAiSdk = (): typeof OpenAiSdk => require('openai') as typeof OpenAiSdk;
