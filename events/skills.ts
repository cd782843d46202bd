import { z } from 'zod';
import { defineEvent, freeFormObject, type EventOf, type ResourceDeclaration } from './contract';

const skillResource: ResourceDeclaration = { kind: 'skill', id: 'skillId' };

const params = freeFormObject();

/** A skill's id is the position of its SkillCreated; later events carry the resulting full state. */
export const SkillCreated = defineEvent(
  'SkillCreated',
  z.object({
    projectId: z.number().int(),
    project: z.string(),
    name: z.string(),
    type: z.string(),
    params,
    createdAt: z.iso.datetime(),
  }),
  { resource: skillResource },
);
export const SkillUpdated = defineEvent(
  'SkillUpdated',
  z.object({
    projectId: z.number().int(),
    project: z.string(),
    skillId: z.number().int(),
    name: z.string(),
    type: z.string(),
    params,
    updatedAt: z.iso.datetime(),
  }),
  { resource: skillResource },
);
export const SkillDeleted = defineEvent(
  'SkillDeleted',
  z.object({
    projectId: z.number().int(),
    skillId: z.number().int(),
    name: z.string(),
    deletedAt: z.iso.datetime(),
  }),
  { resource: skillResource },
);

export type SkillCreated = EventOf<typeof SkillCreated>;
export type SkillUpdated = EventOf<typeof SkillUpdated>;
export type SkillDeleted = EventOf<typeof SkillDeleted>;
export type SkillEvent = SkillCreated | SkillUpdated | SkillDeleted;
export const skillContracts = [SkillCreated, SkillUpdated, SkillDeleted] as const;
