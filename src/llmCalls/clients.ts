import { createLlmClient, type LlmClient, type LlmSettings } from '../engines/llm';
import type { LlmCallPorts } from './settings';

const MAX_CLIENTS = 64;

/**
 * One client per provider endpoint and key: queries reuse its keep-alive connections. Bounded:
 * past MAX_CLIENTS the oldest is dropped.
 */
export const llmClientPool = (ports: Pick<LlmCallPorts, 'requestTimeoutMs' | 'retry'>) => {
  const clients = new Map<string, LlmClient>();
  return (settings: LlmSettings) => {
    const key = JSON.stringify([settings.provider, settings.baseUrl, settings.apiKey, settings.apiVersion]);
    let client = clients.get(key);
    if (!client) {
      client = createLlmClient(settings, { requestTimeoutMs: ports.requestTimeoutMs, retry: ports.retry });
      if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value as string);
      clients.set(key, client);
    }
    return client;
  };
};
