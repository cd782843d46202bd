import { createLlmClient, type LlmClient, type LlmSettings } from '../engines/llm';

const MAX_CLIENTS = 64;

/**
 * One client per provider endpoint, key and settings, so runs reuse its keep-alive connections (a
 * new client per run paid a TCP handshake per model call). In memory only; bounded: past
 * MAX_CLIENTS the oldest is dropped.
 */
export const agentLlmClientPool = (requestTimeoutMs: number) => {
  const clients = new Map<string, LlmClient>();
  return (settings: LlmSettings) => {
    const key = JSON.stringify([
      settings.provider,
      settings.baseUrl,
      settings.apiKey,
      settings.apiVersion,
      settings.temperature,
      settings.maxTokens,
    ]);
    let client = clients.get(key);
    if (!client) {
      client = createLlmClient(settings, { requestTimeoutMs });
      if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value as string);
      clients.set(key, client);
    }
    return client;
  };
};
