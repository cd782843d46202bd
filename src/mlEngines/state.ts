import type { RecordedEvent } from '../../events';
import type { Aggregate } from '../eventlog/commands';
import { nameKey } from '../shared/names';

/** An ML engine as its own stream (`ml-engine-<name>`) knows it: the log holds its real secrets. */
export type MlEngineState =
  | { status: 'none' }
  | {
      status: 'live';
      id: bigint;
      name: string;
      handler: string;
      parameters: Record<string, unknown>;
      version: bigint;
      /** BYOM engines: how many versions of the code were uploaded (1 at creation). */
      byomVersions: number;
    }
  | { status: 'deleted'; name: string };

const evolveMlEngine = (state: MlEngineState, event: RecordedEvent): MlEngineState => {
  switch (event.type) {
    case 'MlEngineCreated':
      return {
        status: 'live',
        id: event.meta.position,
        name: event.data.name,
        handler: event.data.handler,
        parameters: event.data.parameters,
        version: event.meta.position,
        byomVersions: event.data.byom ? 1 : 0,
      };
    case 'MlEngineUpdated':
      return state.status === 'live'
        ? {
            ...state,
            parameters: event.data.parameters,
            version: event.meta.position,
            byomVersions: event.data.version,
          }
        : state;
    case 'MlEngineDeleted':
      return { status: 'deleted', name: event.data.name };
    default:
      return state;
  }
};

export const mlEngineAggregate: Aggregate<MlEngineState> = {
  initialState: () => ({ status: 'none' }),
  evolve: evolveMlEngine,
};

export const mlEngineStream = (name: string) => `ml-engine-${nameKey(name)}`;

/**
 * The handlers an engine can be made from. Language-model providers are reached through an
 * OpenAI-compatible API (src/engines/llm); `lightwood` is the built-in tabular engine (src/engines/ml).
 */
export const LLM_HANDLERS = [
  'openai',
  'openai_compatible',
  'azure_openai',
  'anthropic',
  'google',
  'ollama',
  'vllm',
  'litellm',
  'lmstudio',
] as const;
const TABULAR_HANDLERS = ['lightwood', 'mindledger'] as const;
/**
 * Bring your own model: MindsDB's engine made by uploading Python model code. Its code is kept
 * (the log has it); this service does not run Python, so models cannot be trained with it.
 */
export const BYOM_HANDLER = 'byom';
export const ML_HANDLERS: readonly string[] = [...LLM_HANDLERS, ...TABULAR_HANDLERS, BYOM_HANDLER];

/** The engines every server has, without a CREATE ML_ENGINE (MindsDB's default `lightwood`). */
export const BUILT_IN_ENGINES = [{ name: 'lightwood', handler: 'lightwood' }] as const;
