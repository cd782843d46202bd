import { z } from 'zod';
import { defineEvent, freeFormObject, type EventOf, type ResourceDeclaration } from './contract';

const mlEngineResource: ResourceDeclaration = { kind: 'mlEngine', id: 'engineId' };

/**
 * An ML engine (MindsDB's `CREATE ML_ENGINE name FROM handler USING …`): a named handler with its
 * settings, e.g. an LLM provider's API key and base URL that agents can name instead of carrying
 * keys. Parameters hold secrets, sealed in the log (src/ledger/sealing.ts); every reader masks them.
 */
/**
 * A BYOM engine's uploaded model code and its requirements (MindsDB's `PUT /api/handlers/byom/{name}`),
 * kept in the log as sent; `parameters` name the files (`code`, `modules`) and the `type`.
 */
const byomSources = z.object({ code: z.string(), modules: z.string() });

export const MlEngineCreated = defineEvent(
  'MlEngineCreated',
  z.object({
    name: z.string(),
    handler: z.string(),
    parameters: freeFormObject(),
    byom: byomSources.optional(),
    createdAt: z.iso.datetime(),
  }),
  { resource: mlEngineResource },
);
/** A new version of a BYOM engine's code (`POST /api/handlers/byom/{name}`); `version` counts from 1 (the upload that made it). */
export const MlEngineUpdated = defineEvent(
  'MlEngineUpdated',
  z.object({
    engineId: z.number().int(),
    name: z.string(),
    parameters: freeFormObject(),
    byom: byomSources,
    version: z.number().int().min(2),
    updatedAt: z.iso.datetime(),
  }),
  { resource: mlEngineResource },
);
export const MlEngineDeleted = defineEvent(
  'MlEngineDeleted',
  z.object({ engineId: z.number().int(), name: z.string(), deletedAt: z.iso.datetime() }),
  { resource: mlEngineResource },
);

export type MlEngineCreated = EventOf<typeof MlEngineCreated>;
export type MlEngineUpdated = EventOf<typeof MlEngineUpdated>;
export type MlEngineDeleted = EventOf<typeof MlEngineDeleted>;
export type MlEngineEvent = MlEngineCreated | MlEngineUpdated | MlEngineDeleted;
export const mlEngineContracts = [MlEngineCreated, MlEngineUpdated, MlEngineDeleted] as const;
