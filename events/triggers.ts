import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const triggerResource: ResourceDeclaration = { kind: 'trigger', id: 'triggerId' };
const triggerFiringResource: ResourceDeclaration = { kind: 'triggerFiring', id: 'triggerId' };

/** Who made the trigger: its statements run with their rights, recorded as `system:trigger:<id>`. */
const triggerOwner = z.object({
  user: z.string().nullable(),
  role: z.enum(['admin', 'editor', 'analyst', 'auditor']).nullable(),
  project: z.string().nullable(),
});

/**
 * A trigger: statements run for the rows a table of an external PostgreSQL database gains or
 * changes. `key` names what was installed in that database (a row trigger feeding a queue table).
 */
export const TriggerCreated = defineEvent(
  'TriggerCreated',
  z.object({
    projectId: z.number().int(),
    project: z.string(),
    name: z.string(),
    database: z.string(),
    table: z.string(),
    /** UPDATE fires only when one of these changes; null: any. */
    columns: z.array(z.string()).nullable(),
    /** The statements as written, separated by `;`; TABLE_DELTA reads the rows of a firing. */
    query: z.string(),
    key: z.string().regex(/^[a-f0-9]{12}$/),
    owner: triggerOwner,
    createdAt: z.iso.datetime(),
  }),
  { resource: triggerResource },
);
export const TriggerDeleted = defineEvent(
  'TriggerDeleted',
  z.object({
    projectId: z.number().int(),
    triggerId: z.number().int(),
    name: z.string(),
    deletedAt: z.iso.datetime(),
  }),
  { resource: triggerResource },
);

/**
 * A firing, on the trigger's own stream (`trigger-firings-<id>`): the queue rows up to `upTo` are
 * claimed by appending this expecting the stream's version, so of two processes only one runs them.
 */
export const TriggerFired = defineEvent(
  'TriggerFired',
  z.object({
    triggerId: z.number().int(),
    projectId: z.number().int(),
    firing: z.number().int().min(1),
    claimId: z.string(),
    /** The last queue row this firing takes (those after the previous firing's, up to this). */
    upTo: z.number().int(),
    rows: z.number().int().min(0),
    node: z.string(),
    firedAt: z.iso.datetime(),
  }),
  { resource: triggerFiringResource },
);
export const TriggerFiringFinished = defineEvent(
  'TriggerFiringFinished',
  z.object({
    triggerId: z.number().int(),
    claimId: z.string(),
    statements: z.number().int(),
    finishedAt: z.iso.datetime(),
  }),
  { resource: triggerFiringResource },
);
export const TriggerFiringFailed = defineEvent(
  'TriggerFiringFailed',
  z.object({
    triggerId: z.number().int(),
    claimId: z.string(),
    error: z.string(),
    failedAt: z.iso.datetime(),
  }),
  { resource: triggerFiringResource },
);

export type TriggerOwner = z.infer<typeof triggerOwner>;
export type TriggerCreated = EventOf<typeof TriggerCreated>;
export type TriggerDeleted = EventOf<typeof TriggerDeleted>;
export type TriggerFired = EventOf<typeof TriggerFired>;
export type TriggerFiringFinished = EventOf<typeof TriggerFiringFinished>;
export type TriggerFiringFailed = EventOf<typeof TriggerFiringFailed>;
export type TriggerEvent = TriggerCreated | TriggerDeleted;
export type TriggerFiringEvent = TriggerFired | TriggerFiringFinished | TriggerFiringFailed;
export const triggerContracts = [
  TriggerCreated,
  TriggerDeleted,
  TriggerFired,
  TriggerFiringFinished,
  TriggerFiringFailed,
] as const;
