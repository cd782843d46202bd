import type { SkillCreated, SkillDeleted, SkillDetachedFromAgent, SkillUpdated } from '../../events';
import type { ProjectContents } from '../shared/projectState';
import { requireLiveProject, type ProjectState } from '../shared/projectState';
import { checkExpectedVersion, conflict, invalid } from '../shared/errors';
import { mergeParams, type Params } from '../shared/params';
import { decideByType, type Now } from '../shared/decision';
import {
  agentsUsingSkill,
  requireSkill,
  skillByName,
  skillByRef,
  type Skill,
  type SkillsState,
} from './state';
import { validateSkillParams } from './rules';

/** What skill commands are decided on: the project, its skills, and the agents that use them. */
type SkillDecisionState = {
  readonly project: ProjectState;
  readonly skills: SkillsState;
  readonly agents: ProjectContents['agents'];
};

export type SkillCommand =
  | { type: 'CreateSkill'; data: { name: string; type: string; params: Params }; metadata: Now }
  | {
      /** PUT: update when present (name and type replaced, params merged), else create with the URL name. */
      type: 'PutSkill';
      data: { ref: string; name?: string; type?: string; params?: Params; expectedVersion?: bigint };
      metadata: Now;
    }
  | { type: 'DeleteSkill'; data: { ref: string; expectedVersion?: bigint }; metadata: Now };

const checkVersion = (resource: { name: string; version: bigint }, expected: bigint | undefined) =>
  checkExpectedVersion('Skill', resource, expected);

const created = (
  state: SkillDecisionState,
  data: { name: string; type: string; params: Params },
  now: Date,
): SkillCreated => {
  const project = requireLiveProject(state.project);
  if (skillByName(state.skills, data.name))
    throw conflict(
      `Skill with name ${data.name} already exists. Please use a different name`,
      'Skill already exists',
    );
  validateSkillParams(data.type, data.params);
  return {
    type: 'SkillCreated',
    data: { projectId: Number(project.id), project: project.name, ...data, createdAt: now.toISOString() },
  };
};

/** Deleting a skill detaches it from every agent that uses it, each detachment an event of its own. */
const removeSkill = (
  state: SkillDecisionState,
  skill: Skill,
  now: Date,
  reason: string,
): (SkillDeleted | SkillDetachedFromAgent)[] => {
  const projectId = Number(requireLiveProject(state.project).id);
  const at = now.toISOString();
  const detachments: SkillDetachedFromAgent[] = agentsUsingSkill(state.agents, skill.id).map((agent) => ({
    type: 'SkillDetachedFromAgent',
    data: {
      projectId,
      agentId: Number(agent.id),
      skillId: Number(skill.id),
      skillName: skill.name,
      reason,
      detachedAt: at,
    },
  }));
  return [
    { type: 'SkillDeleted', data: { projectId, skillId: Number(skill.id), name: skill.name, deletedAt: at } },
    ...detachments,
  ];
};

type Command<T extends SkillCommand['type']> = Extract<SkillCommand, { type: T }>;

const createSkill = (command: Command<'CreateSkill'>, state: SkillDecisionState): SkillCreated[] => [
  created(state, command.data, command.metadata.now),
];

const putSkill = (
  command: Command<'PutSkill'>,
  state: SkillDecisionState,
): (SkillCreated | SkillUpdated)[] => {
  const project = requireLiveProject(state.project);
  const now = command.metadata.now;
  const current = skillByRef(state.skills, command.data.ref);
  if (!current) {
    if (!command.data.type) throw invalid('Missing "type" field for skill', 'Missing field');
    // MindsDB creates a missing skill under the URL's name, whatever the body says.
    const params = command.data.params ?? {};
    return [created(state, { name: command.data.ref, type: command.data.type, params }, now)];
  }
  checkVersion(current, command.data.expectedVersion);
  const name = command.data.name ?? current.name;
  const clash = skillByName(state.skills, name);
  if (clash && clash.id !== current.id)
    throw conflict(
      `Skill with name ${name} already exists. Please use a different name`,
      'Skill already exists',
    );
  const type = command.data.type ?? current.type;
  const params = command.data.params ? mergeParams(current.params, command.data.params) : current.params;
  validateSkillParams(type, params);
  return [
    {
      type: 'SkillUpdated',
      data: {
        projectId: Number(project.id),
        project: project.name,
        skillId: Number(current.id),
        name,
        type,
        params,
        updatedAt: now.toISOString(),
      },
    },
  ];
};

const deleteSkill = (
  command: Command<'DeleteSkill'>,
  state: SkillDecisionState,
): (SkillDeleted | SkillDetachedFromAgent)[] => {
  requireLiveProject(state.project);
  const skill = requireSkill(state.skills, command.data.ref);
  checkVersion(skill, command.data.expectedVersion);
  return removeSkill(state, skill, command.metadata.now, `skill '${skill.name}' was deleted`);
};

export const decideSkill = decideByType<
  SkillCommand,
  SkillDecisionState,
  SkillCreated | SkillUpdated | SkillDeleted | SkillDetachedFromAgent
>({ CreateSkill: createSkill, PutSkill: putSkill, DeleteSkill: deleteSkill });
