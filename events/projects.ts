import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const projectResource: ResourceDeclaration = { kind: 'project', id: 'projectId' };

// Resource ids are the log position of the event that created the resource: unique, stable, and
// what MindsDB clients expect (integers). Later events name the id they are about.

export const ProjectCreated = defineEvent(
  'ProjectCreated',
  z.object({ name: z.string(), createdAt: z.iso.datetime() }),
  { resource: projectResource },
);
export const ProjectDeleted = defineEvent(
  'ProjectDeleted',
  z.object({ projectId: z.number().int(), name: z.string(), deletedAt: z.iso.datetime() }),
  { resource: projectResource },
);

export type ProjectCreated = EventOf<typeof ProjectCreated>;
export type ProjectDeleted = EventOf<typeof ProjectDeleted>;

/** Events of the project stream that concern the project itself (its contents add their own). */
export type ProjectLifecycleEvent = ProjectCreated | ProjectDeleted;
export const projectLifecycleContracts = [ProjectCreated, ProjectDeleted] as const;
