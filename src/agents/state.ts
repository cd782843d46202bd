import type { AgentDeleted, RecordedEvent } from '../../events';
import { defineProjectSlice } from '../shared/projectState';
import { notFound } from '../shared/errors';
import { findByRef, type Params } from '../shared/params';

export type SkillLink = { readonly skillId: bigint; readonly parameters: Params };
export type Agent = {
  readonly id: bigint;
  readonly name: string;
  readonly modelName: string | null;
  readonly provider: string | null;
  readonly params: Params;
  readonly skills: readonly SkillLink[];
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly version: bigint;
};
export type AgentsState = ReadonlyMap<bigint, Agent>;

const toLinks = (links: readonly { skillId: number; parameters: Params }[]): SkillLink[] =>
  links.map((l) => ({ skillId: BigInt(l.skillId), parameters: l.parameters }));

const evolveAgents = (agents: AgentsState, event: RecordedEvent): AgentsState => {
  switch (event.type) {
    case 'AgentCreated': {
      const d = event.data;
      const id = event.meta.position;
      return new Map(agents).set(id, {
        id,
        name: d.name,
        modelName: d.modelName,
        provider: d.provider,
        params: d.params,
        skills: toLinks(d.skills),
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
        version: id,
      });
    }
    case 'AgentUpdated': {
      const d = event.data;
      const current = agents.get(BigInt(d.agentId));
      if (!current) return agents;
      return new Map(agents).set(current.id, {
        ...current,
        name: d.name,
        modelName: d.modelName,
        provider: d.provider,
        params: d.params,
        skills: toLinks(d.skills),
        updatedAt: d.updatedAt,
        version: event.meta.position,
      });
    }
    case 'SkillDetachedFromAgent': {
      const d = event.data;
      const current = agents.get(BigInt(d.agentId));
      if (!current) return agents;
      return new Map(agents).set(current.id, {
        ...current,
        skills: current.skills.filter((l) => l.skillId !== BigInt(d.skillId)),
        updatedAt: d.detachedAt,
        version: event.meta.position,
      });
    }
    case 'AgentDeleted': {
      const next = new Map(agents);
      next.delete(BigInt(event.data.agentId));
      return next;
    }
    default:
      return agents;
  }
};

export const requireAgent = (agents: AgentsState, ref: string): Agent => {
  const agent = findByRef(agents.values(), ref);
  if (!agent) throw notFound(`Agent with name ${ref} does not exist`, 'Agent not found');
  return agent;
};

export const agentsSlice = defineProjectSlice({
  key: 'agents',
  initial: (): AgentsState => new Map(),
  evolve: evolveAgents,
  cascade: (agents, project, at) =>
    [...agents.values()].map((a): AgentDeleted => ({
      type: 'AgentDeleted',
      data: { projectId: Number(project.id), agentId: Number(a.id), name: a.name, deletedAt: at },
    })),
});
