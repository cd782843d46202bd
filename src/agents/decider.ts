import type { AgentCreated, AgentDeleted, AgentUpdated, ChatbotStoppedAgentDeleted } from '../../events';
import type { ProjectAggregate } from '../shared/projectState';
import { findModel } from '../models/state';
import { canonicalSkillType, skillById, skillByRef } from '../skills/state';
import { checkExpectedVersion, invalid, notFound } from '../shared/errors';
import { findByRef, mergeParams, type Params } from '../shared/params';
import { requireFreeName } from '../shared/freeName';
import { decideInProject, type InProject, type Now, type ProjectRule } from '../shared/decision';
import { requireSecretsForNewDestination } from '../shared/secrets';
import { agentDeleted, requireAgent, type Agent, type SkillLink } from './state';

/** What agent commands are decided on: the project and the resources agents refer to or affect. */
type AgentDecisionState = Pick<ProjectAggregate, 'project' | 'skills' | 'agents' | 'chatbots' | 'models'>;

type AgentEvent = AgentCreated | AgentUpdated | AgentDeleted | ChatbotStoppedAgentDeleted;

/** A skill named in a request: by name or id, with optional per-link parameters. */
export type SkillRef = { ref: string; parameters: Params };

export type AgentCommand =
  | {
      type: 'CreateAgent';
      data: {
        name: string;
        modelName: string | null;
        provider: string | null;
        params: Params;
        skills: SkillRef[];
      };
      metadata: Now;
    }
  | {
      type: 'UpdateAgent';
      data: {
        ref: string;
        name?: string;
        modelName?: string | null;
        provider?: string | null;
        /** Merged into the stored params (null removes a key). */
        params?: Params;
        skills?: SkillRef[];
        skillsToAdd?: SkillRef[];
        skillsToRemove?: string[];
        expectedVersion?: bigint;
      };
      metadata: Now;
    }
  | { type: 'DeleteAgent'; data: { ref: string; expectedVersion?: bigint }; metadata: Now };

/** MindsDB v25 refuses these; they moved into skills and `data`. */
const DEPRECATED_PARAMS = [
  'database',
  'knowledge_base_database',
  'include_tables',
  'ignore_tables',
  'include_knowledge_bases',
  'ignore_knowledge_bases',
];

const resolveSkills = (state: AgentDecisionState, refs: readonly SkillRef[]): SkillLink[] => {
  const missing = refs.filter((r) => !skillByRef(state.skills, r.ref)).map((r) => r.ref);
  if (missing.length)
    throw notFound(
      `Skills ${missing.map((m) => `"${m}"`).join(', ')} do not exist in this project. Please ensure that the names are correct and try again.`,
      'Resource not found',
    );
  const links = new Map<bigint, SkillLink>();
  for (const r of refs) {
    const skill = skillByRef(state.skills, r.ref)!;
    links.set(skill.id, { skillId: skill.id, parameters: r.parameters });
  }
  return [...links.values()];
};

const checkModel = (state: AgentDecisionState, modelName: string | null, provider: string | null) => {
  // An agent served by a MindsDB model must name one that exists in its project.
  if (provider?.toLowerCase() === 'mindsdb' && modelName && !findModel(state.models, modelName))
    throw notFound(`Model with name ${modelName} does not exist in this project`, 'Resource not found');
};

const checkDeprecated = (params: Params) => {
  const used = DEPRECATED_PARAMS.filter((p) => p in params);
  if (used.length)
    throw invalid(
      `Parameters ${used.join(', ')} are no longer supported: use a sql skill, or "data": {"tables": [...], "knowledge_bases": [...]}`,
      'Deprecated parameters',
    );
};

/** Adding a retrieval skill to an agent that has no mode switches it to retrieval mode (MindsDB). */
const withRetrievalMode = (
  state: AgentDecisionState,
  params: Params,
  added: readonly SkillLink[],
): Params => {
  const addsRetrieval = added.some(
    (l) => canonicalSkillType(skillById(state.skills, l.skillId)?.type ?? '') === 'retrieval',
  );
  return addsRetrieval && params.mode === undefined ? { ...params, mode: 'retrieval' } : params;
};

const plainLinks = (links: readonly SkillLink[]) =>
  links.map((l) => ({ skillId: Number(l.skillId), parameters: l.parameters }));

/** Deleting an agent stops every chatbot that used it, each stop an event of its own. */
const removeAgent = (state: AgentDecisionState, agent: Agent, { project, at }: InProject): AgentEvent[] => {
  const projectId = Number(project.id);
  const stops: ChatbotStoppedAgentDeleted[] = [...state.chatbots.values()]
    .filter((bot) => bot.agentId === agent.id)
    .map((bot) => ({
      type: 'ChatbotStoppedAgentDeleted',
      data: {
        projectId,
        chatbotId: Number(bot.id),
        agentId: Number(agent.id),
        agentName: agent.name,
        lastError: `agent '${agent.name}' was deleted`,
        stoppedAt: at,
      },
    }));
  return [agentDeleted(agent, project, at), ...stops];
};

type Command<T extends AgentCommand['type']> = Extract<AgentCommand, { type: T }>;
type Decide<T extends AgentCommand['type']> = ProjectRule<AgentCommand, T, AgentDecisionState, AgentEvent>;

const createAgent: Decide<'CreateAgent'> = (command, state, { project, at }) => {
  const d = command.data;
  requireFreeName('Agent', state.agents.values(), d.name);
  checkDeprecated(d.params);
  checkModel(state, d.modelName, d.provider);
  const skills = resolveSkills(state, d.skills);
  return [
    {
      type: 'AgentCreated',
      data: {
        projectId: Number(project.id),
        project: project.name,
        name: d.name,
        modelName: d.modelName,
        provider: d.provider,
        params: withRetrievalMode(state, d.params, skills),
        skills: plainLinks(skills),
        createdAt: at,
      },
    },
  ];
};

/** The agent's skills after an update, and the links it adds (which may switch it to retrieval mode). */
const updatedSkills = (
  state: AgentDecisionState,
  current: Agent,
  d: Command<'UpdateAgent'>['data'],
): { skills: SkillLink[]; added: SkillLink[] } => {
  if (d.skills) {
    const skills = resolveSkills(state, d.skills);
    return { skills, added: skills.filter((l) => !current.skills.some((c) => c.skillId === l.skillId)) };
  }
  const toAdd = resolveSkills(state, d.skillsToAdd ?? []);
  const toRemove = resolveSkills(
    state,
    (d.skillsToRemove ?? []).map((ref) => ({ ref, parameters: {} })),
  );
  const both = toAdd.filter((a) => toRemove.some((r) => r.skillId === a.skillId));
  if (both.length) throw invalid('The same skill cannot be both added and removed', 'Wrong arguments');
  const skills = current.skills.filter((l) => !toRemove.some((r) => r.skillId === l.skillId));
  for (const link of toAdd) {
    const i = skills.findIndex((l) => l.skillId === link.skillId);
    if (i >= 0) skills[i] = link;
    else skills.push(link);
  }
  return { skills, added: toAdd };
};

const updateAgent: Decide<'UpdateAgent'> = (command, state, { project, at }) => {
  const d = command.data;
  const current = findByRef(state.agents.values(), d.ref);
  if (!current)
    throw invalid('Creation of an agent using the PUT method is not allowed.', 'Creation is not allowed');
  checkExpectedVersion('Agent', current, d.expectedVersion);
  if (d.skills && (d.skillsToAdd || d.skillsToRemove))
    throw invalid(
      '"skills" rewrites the list and cannot be combined with "skills_to_add" or "skills_to_remove"',
      'Wrong arguments',
    );
  const name = d.name ?? current.name;
  requireFreeName('Agent', state.agents.values(), name, current.id);
  const params = d.params ? mergeParams(current.params, d.params) : current.params;
  checkDeprecated(d.params ?? {});
  const modelName = d.modelName === undefined ? current.modelName : d.modelName;
  const provider = d.provider === undefined ? current.provider : d.provider;
  // Another provider (or ML engine) is another destination: stored keys must come again.
  if ((provider ?? null) !== (current.provider ?? null))
    requireSecretsForNewDestination(d.params ?? {}, current.params, params, 'provider');
  checkModel(state, modelName, provider);
  const { skills, added } = updatedSkills(state, current, d);
  return [
    {
      type: 'AgentUpdated',
      data: {
        projectId: Number(project.id),
        project: project.name,
        agentId: Number(current.id),
        name,
        modelName,
        provider,
        params: withRetrievalMode(state, params, added),
        skills: plainLinks(skills),
        updatedAt: at,
      },
    },
  ];
};

const deleteAgent: Decide<'DeleteAgent'> = (command, state, inProject) => {
  const agent = requireAgent(state.agents, command.data.ref);
  checkExpectedVersion('Agent', agent, command.data.expectedVersion);
  return removeAgent(state, agent, inProject);
};

export const decideAgent = decideInProject<AgentCommand, AgentDecisionState, AgentEvent>({
  CreateAgent: createAgent,
  UpdateAgent: updateAgent,
  DeleteAgent: deleteAgent,
});
