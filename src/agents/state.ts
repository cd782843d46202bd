import type { AgentCreated, AgentDeleted, AgentUpdated, RecordedEvent } from '../../events';
import { findByRef, type Params } from '../shared/params';
import {
  changeResource,
  defineResourcesSlice,
  firstVersion,
  nextVersion,
  orNotFound,
  withoutResource,
  withResource,
  type Versioned,
} from '../shared/resourceState';
import type { ProjectRef } from '../shared/projectState';

export type SkillLink = { readonly skillId: bigint; readonly parameters: Params };
export type Agent = {
  readonly id: bigint;
  readonly name: string;
  readonly modelName: string | null;
  readonly provider: string | null;
  readonly params: Params;
  readonly skills: readonly SkillLink[];
} & Versioned;
export type AgentsState = ReadonlyMap<bigint, Agent>;

const toLinks = (links: readonly { skillId: number; parameters: Params }[]): SkillLink[] =>
  links.map((l) => ({ skillId: BigInt(l.skillId), parameters: l.parameters }));

/** What an agent's creation and update say of it. */
const agentFields = (d: AgentCreated['data'] | AgentUpdated['data']) => ({
  name: d.name,
  modelName: d.modelName,
  provider: d.provider,
  params: d.params,
  skills: toLinks(d.skills),
});

const evolveAgents = (agents: AgentsState, event: RecordedEvent): AgentsState => {
  switch (event.type) {
    case 'AgentCreated':
      return withResource(agents, firstVersion(event, event.data.createdAt, agentFields(event.data)));
    case 'AgentUpdated': {
      const d = event.data;
      return changeResource(agents, d.agentId, (current) =>
        nextVersion(current, event, d.updatedAt, agentFields(d)),
      );
    }
    case 'SkillDetachedFromAgent': {
      const d = event.data;
      return changeResource(agents, d.agentId, (current) =>
        nextVersion(current, event, d.detachedAt, {
          skills: current.skills.filter((l) => l.skillId !== BigInt(d.skillId)),
        }),
      );
    }
    case 'AgentDeleted':
      return withoutResource(agents, event.data.agentId);
    default:
      return agents;
  }
};

export const requireAgent = (agents: AgentsState, ref: string): Agent =>
  orNotFound(findByRef(agents.values(), ref), 'Agent', ref);

/** The event deleting `agent`: its DELETE's and its project's deletion's. */
export const agentDeleted = (agent: Agent, project: ProjectRef, at: string): AgentDeleted => ({
  type: 'AgentDeleted',
  data: { projectId: Number(project.id), agentId: Number(agent.id), name: agent.name, deletedAt: at },
});

export const agentsSlice = defineResourcesSlice('agents', evolveAgents, agentDeleted);
