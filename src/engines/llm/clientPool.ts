import { BoundedMap } from '../../shared/boundedMap';
import { createLlmClient, type LlmClientOptions } from './openaiClient';
import type { LlmSettings } from './providers';
import type { LlmClient } from './types';

const MAX_CLIENTS = 64;

/**
 * One client per provider endpoint, key and settings, so calls reuse its keep-alive connections (a
 * new client per call paid a TCP handshake per model call). In memory only; bounded: past
 * MAX_CLIENTS the oldest is dropped.
 */
export const llmClientPool = (options: LlmClientOptions) => {
  const clients = new BoundedMap<string, LlmClient>(MAX_CLIENTS);
  return (settings: LlmSettings) => {
    const { provider, baseUrl, apiKey, apiVersion, temperature, maxTokens } = settings;
    const key = JSON.stringify([provider, baseUrl, apiKey, apiVersion, temperature, maxTokens]);
    let client = clients.get(key);
    if (!client) clients.set(key, (client = createLlmClient(settings, options)));
    return client;
  };
};
