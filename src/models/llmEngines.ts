import { LLM_HANDLERS } from '../mlEngines/state';
import type { LlmEngineRef } from './decider';

/** An ML engine's name and handler (CREATE ML_ENGINE): an LLM model names one as its engine. */
export type LlmEngineLookup = (name: string) => Promise<{ name: string; handler: string } | undefined>;

/**
 * The LLM engine a model's `engine` option names: an ML engine made FROM an LLM handler, or an
 * LLM handler itself (`engine = 'openai'`: the server's defaults). Undefined: a trained model's.
 */
export const llmEngineOf = async (
  llmEngines: LlmEngineLookup,
  engine: unknown,
): Promise<LlmEngineRef | undefined> => {
  if (typeof engine !== 'string' || engine.trim() === '') return undefined;
  const name = engine.trim().toLowerCase();
  const isLlmHandler = (h: string) => (LLM_HANDLERS as readonly string[]).includes(h.toLowerCase());
  const found = await llmEngines(name);
  // A handler's name alone (`engine = 'openai'`) is no engine: CREATE ML_ENGINE makes one (with no
  // key, it calls through the server's OPENAI_BASE_URL and OPENAI_API_KEY).
  return found && isLlmHandler(found.handler)
    ? { name: found.name, handler: found.handler.toLowerCase() }
    : undefined;
};
