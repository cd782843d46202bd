import { z } from 'zod';
import { defineEvent, freeFormObject, type EventOf, type ResourceDeclaration } from './contract';

const agentResource: ResourceDeclaration = { kind: 'agent', id: 'agentId' };
const skillResource: ResourceDeclaration = { kind: 'skill', id: 'skillId' };

const params = freeFormObject();
/** An agent's link to a skill, with MindsDB's per-link parameters (e.g. `tables` narrowing a sql skill). */
const skillLink = z.object({ skillId: z.number().int(), parameters: params });

const agentState = {
  projectId: z.number().int(),
  /** The project's name: projects are never renamed, so readers need no lookup. */
  project: z.string(),
  name: z.string(),
  modelName: z.string().nullable(),
  provider: z.string().nullable(),
  params,
  skills: z.array(skillLink),
};

export const AgentCreated = defineEvent(
  'AgentCreated',
  z.object({ ...agentState, createdAt: z.iso.datetime() }),
  { resource: agentResource },
);
export const AgentUpdated = defineEvent(
  'AgentUpdated',
  z.object({ ...agentState, agentId: z.number().int(), updatedAt: z.iso.datetime() }),
  { resource: agentResource },
);
export const AgentDeleted = defineEvent(
  'AgentDeleted',
  z.object({
    projectId: z.number().int(),
    agentId: z.number().int(),
    name: z.string(),
    deletedAt: z.iso.datetime(),
  }),
  { resource: agentResource },
);
/** A consequence of deleting a skill: recorded on its own so the log says why the agent changed. */
export const SkillDetachedFromAgent = defineEvent(
  'SkillDetachedFromAgent',
  z.object({
    projectId: z.number().int(),
    agentId: z.number().int(),
    skillId: z.number().int(),
    skillName: z.string(),
    reason: z.string(),
    detachedAt: z.iso.datetime(),
  }),
  { resource: skillResource },
);

export type AgentCreated = EventOf<typeof AgentCreated>;
export type AgentUpdated = EventOf<typeof AgentUpdated>;
export type AgentDeleted = EventOf<typeof AgentDeleted>;
export type SkillDetachedFromAgent = EventOf<typeof SkillDetachedFromAgent>;
export type AgentEvent = AgentCreated | AgentUpdated | AgentDeleted | SkillDetachedFromAgent;
export const agentContracts = [AgentCreated, AgentUpdated, AgentDeleted, SkillDetachedFromAgent] as const;
