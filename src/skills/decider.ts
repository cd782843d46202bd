import type { SkillCreated, SkillDeleted, SkillDetachedFromAgent, SkillUpdated } from '../../events';
import type { ProjectAggregate } from '../shared/projectState';
import { checkExpectedVersion, conflict, invalid } from '../shared/errors';
import { mergeParams, type Params } from '../shared/params';
import { decideInProject, type InProject, type Now, type ProjectRule } from '../shared/decision';
import { agentsUsingSkill, requireSkill, skillByName, skillByRef, skillDeleted, type Skill } from './state';
import { validateSkillParams } from './rules';

/** What skill commands are decided on: the project, its skills, and the agents that use them. */
type SkillDecisionState = Pick<ProjectAggregate, 'project' | 'skills' | 'agents'>;

type SkillEvent = SkillCreated | SkillUpdated | SkillDeleted | SkillDetachedFromAgent;

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

/** A name no other skill of the project has (`self`: the one renamed). */
const requireFreeName = (state: SkillDecisionState, name: string, self?: bigint) => {
  const clash = skillByName(state.skills, name);
  if (clash && clash.id !== self)
    throw conflict(
      `Skill with name ${name} already exists. Please use a different name`,
      'Skill already exists',
    );
};

const created = (
  state: SkillDecisionState,
  data: { name: string; type: string; params: Params },
  { project, at }: InProject,
): SkillCreated => {
  requireFreeName(state, data.name);
  validateSkillParams(data.type, data.params);
  return {
    type: 'SkillCreated',
    data: { projectId: Number(project.id), project: project.name, ...data, createdAt: at },
  };
};

/** Deleting a skill detaches it from every agent that uses it, each detachment an event of its own. */
const removeSkill = (
  state: SkillDecisionState,
  skill: Skill,
  { project, at }: InProject,
  reason: string,
): SkillEvent[] => {
  const projectId = Number(project.id);
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
  return [skillDeleted(skill, project, at), ...detachments];
};

type Decide<T extends SkillCommand['type']> = ProjectRule<SkillCommand, T, SkillDecisionState, SkillEvent>;

const createSkill: Decide<'CreateSkill'> = (command, state, inProject) => [
  created(state, command.data, inProject),
];

const putSkill: Decide<'PutSkill'> = (command, state, { project, at }) => {
  const current = skillByRef(state.skills, command.data.ref);
  if (!current) {
    if (!command.data.type) throw invalid('Missing "type" field for skill', 'Missing field');
    // MindsDB creates a missing skill under the URL's name, whatever the body says.
    const params = command.data.params ?? {};
    return [created(state, { name: command.data.ref, type: command.data.type, params }, { project, at })];
  }
  checkVersion(current, command.data.expectedVersion);
  const name = command.data.name ?? current.name;
  requireFreeName(state, name, current.id);
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
        updatedAt: at,
      },
    },
  ];
};

const deleteSkill: Decide<'DeleteSkill'> = (command, state, inProject) => {
  const skill = requireSkill(state.skills, command.data.ref);
  checkVersion(skill, command.data.expectedVersion);
  return removeSkill(state, skill, inProject, `skill '${skill.name}' was deleted`);
};

export const decideSkill = decideInProject<SkillCommand, SkillDecisionState, SkillEvent>({
  CreateSkill: createSkill,
  PutSkill: putSkill,
  DeleteSkill: deleteSkill,
});
