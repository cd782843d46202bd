import { z } from 'zod';
import { defineEvent, freeFormObject, type EventOf, type ResourceDeclaration } from './contract';

const databaseResource: ResourceDeclaration = { kind: 'database', id: 'databaseId' };

const parameters = freeFormObject();

/** Parameters hold secrets (passwords), sealed in the log under the database's data key (src/ledger/sealing.ts); every reader masks them. */
export const DatabaseCreated = defineEvent(
  'DatabaseCreated',
  z.object({ name: z.string(), engine: z.string(), parameters, createdAt: z.iso.datetime() }),
  { resource: databaseResource },
);
export const DatabaseUpdated = defineEvent(
  'DatabaseUpdated',
  z.object({
    databaseId: z.number().int(),
    name: z.string(),
    engine: z.string(),
    parameters,
    updatedAt: z.iso.datetime(),
  }),
  { resource: databaseResource },
);
export const DatabaseDeleted = defineEvent(
  'DatabaseDeleted',
  z.object({ databaseId: z.number().int(), name: z.string(), deletedAt: z.iso.datetime() }),
  { resource: databaseResource },
);

export type DatabaseCreated = EventOf<typeof DatabaseCreated>;
export type DatabaseUpdated = EventOf<typeof DatabaseUpdated>;
export type DatabaseDeleted = EventOf<typeof DatabaseDeleted>;
export type DatabaseEvent = DatabaseCreated | DatabaseUpdated | DatabaseDeleted;
export const databaseContracts = [DatabaseCreated, DatabaseUpdated, DatabaseDeleted] as const;
