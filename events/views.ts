import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const viewResource: ResourceDeclaration = { kind: 'view', id: 'viewId' };

/**
 * A view: a named SELECT of a project (MindsDB's `CREATE VIEW p.v AS (SELECT …)`), read as a table.
 * Its id is the position of its ViewCreated; an update carries the whole new query.
 */
export const ViewCreated = defineEvent(
  'ViewCreated',
  z.object({
    projectId: z.number().int(),
    project: z.string(),
    name: z.string(),
    /** The SELECT as written (MySQL dialect, MindsDB names), without its parentheses. */
    query: z.string(),
    createdAt: z.iso.datetime(),
  }),
  { resource: viewResource },
);
export const ViewUpdated = defineEvent(
  'ViewUpdated',
  z.object({
    projectId: z.number().int(),
    viewId: z.number().int(),
    name: z.string(),
    query: z.string(),
    updatedAt: z.iso.datetime(),
  }),
  { resource: viewResource },
);
export const ViewDeleted = defineEvent(
  'ViewDeleted',
  z.object({
    projectId: z.number().int(),
    viewId: z.number().int(),
    name: z.string(),
    deletedAt: z.iso.datetime(),
  }),
  { resource: viewResource },
);

export type ViewCreated = EventOf<typeof ViewCreated>;
export type ViewUpdated = EventOf<typeof ViewUpdated>;
export type ViewDeleted = EventOf<typeof ViewDeleted>;
export type ViewEvent = ViewCreated | ViewUpdated | ViewDeleted;
export const viewContracts = [ViewCreated, ViewUpdated, ViewDeleted] as const;
