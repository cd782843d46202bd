import { z } from 'zod';
import { defineEvent, freeFormObject, type EventOf } from './contract';

/**
 * An ML engine (MindsDB's `CREATE ML_ENGINE name FROM handler USING …`): a named handler with its
 * settings, e.g. an LLM provider's API key and base URL that agents can name instead of carrying
 * keys. Parameters hold secrets in clear: only the log has them; every reader masks them.
 */
export const MlEngineCreated = defineEvent(
  'MlEngineCreated',
  z.object({
    name: z.string(),
    handler: z.string(),
    parameters: freeFormObject(),
    createdAt: z.iso.datetime(),
  }),
);
export const MlEngineDeleted = defineEvent(
  'MlEngineDeleted',
  z.object({ engineId: z.number().int(), name: z.string(), deletedAt: z.iso.datetime() }),
);

export type MlEngineCreated = EventOf<typeof MlEngineCreated>;
export type MlEngineDeleted = EventOf<typeof MlEngineDeleted>;
export type MlEngineEvent = MlEngineCreated | MlEngineDeleted;
export const mlEngineContracts = [MlEngineCreated, MlEngineDeleted] as const;
