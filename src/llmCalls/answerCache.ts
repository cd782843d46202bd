import { BoundedMap } from '../shared/boundedMap';

/**
 * This process's LLM answers, by the hash of everything that makes the answer (provider, address,
 * model, options, messages): a repeated prompt is answered without a call (LLM_CACHE_ENTRIES,
 * LLM_CACHE_TTL_MS; 0 entries: off). In memory only, least recently used first out.
 */
export const answerCache = (entries: number, ttlMs: number, now: () => number = Date.now) => {
  const kept = new BoundedMap<string, { text: string; at: number }>(entries);
  return {
    get: (key: string): string | undefined => {
      if (entries === 0) return undefined;
      const found = kept.get(key);
      if (!found || now() - found.at > ttlMs) {
        if (found) kept.delete(key);
        return undefined;
      }
      kept.set(key, found);
      return found.text;
    },
    set: (key: string, text: string) => {
      if (entries === 0) return;
      kept.set(key, { text, at: now() });
    },
  };
};

export type AnswerCache = ReturnType<typeof answerCache>;
