import type {
  AnyRecordedEvent,
  SkillCreated,
  SkillDeleted,
  SkillDetachedFromAgent,
  SkillEvent,
  SkillUpdated,
} from '../../events';
import type { ProjectAggregate } from '../projects/aggregate';
import { requireLiveProject } from '../projects/decider';
import { checkExpectedVersion, conflict, invalid, notFound } from '../shared/errors';
import { findByName, findByRef, mergeParams, type Params } from '../shared/params';
import { validateSkillParams } from './types';

export type Skill = {
  readonly id: bigint;
  readonly name: string;
  readonly type: string;
  readonly params: Params;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Position of the last event that changed it: its ETag. */
  readonly version: bigint;
};
export type SkillsState = ReadonlyMap<bigint, Skill>;

type Now = { now: Date };
export type SkillCommand =
  | { type: 'CreateSkill'; data: { name: string; type: string; params: Params }; metadata: Now }
  | {
      /** PUT: update when present (name and type replaced, params merged), else create with the URL name. */
      type: 'PutSkill';
      data: { ref: string; name?: string; type?: string; params?: Params; expectedVersion?: bigint };
      metadata: Now;
    }
  | { type: 'DeleteSkill'; data: { ref: string; expectedVersion?: bigint }; metadata: Now };

export const evolveSkills = (skills: SkillsState, event: AnyRecordedEvent): SkillsState => {
  switch (event.type) {
    case 'SkillCreated': {
      const d = (event as unknown as SkillCreated).data;
      const id = event.meta.position;
      return new Map(skills).set(id, {
        id,
        name: d.name,
        type: d.type,
        params: d.params,
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
        version: id,
      });
    }
    case 'SkillUpdated': {
      const d = (event as unknown as SkillUpdated).data;
      const current = skills.get(BigInt(d.skillId));
      if (!current) return skills;
      return new Map(skills).set(current.id, {
        ...current,
        name: d.name,
        type: d.type,
        params: d.params,
        updatedAt: d.updatedAt,
        version: event.meta.position,
      });
    }
    case 'SkillDeleted': {
      const next = new Map(skills);
      next.delete(BigInt((event as unknown as SkillDeleted).data.skillId));
      return next;
    }
    default:
      return skills;
  }
};

const checkVersion = (resource: { name: string; version: bigint }, expected: bigint | undefined) =>
  checkExpectedVersion('Skill', resource, expected);

export const requireSkill = (state: ProjectAggregate, ref: string): Skill => {
  const skill = findByRef(state.skills.values(), ref);
  if (!skill) throw notFound(`Skill with name ${ref} not found.`, 'Skill not found');
  return skill;
};

const created = (
  state: ProjectAggregate,
  data: { name: string; type: string; params: Params },
  now: Date,
): SkillCreated => {
  const project = requireLiveProject(state.project);
  if (findByName(state.skills.values(), data.name))
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
export const removeSkill = (
  state: ProjectAggregate,
  skill: Skill,
  now: Date,
  reason: string,
): (SkillDeleted | SkillDetachedFromAgent)[] => {
  const projectId = Number(requireLiveProject(state.project).id);
  const at = now.toISOString();
  const detachments: SkillDetachedFromAgent[] = [...state.agents.values()]
    .filter((agent) => agent.skills.some((link) => link.skillId === skill.id))
    .map((agent) => ({
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

export const decideSkill = (
  command: SkillCommand,
  state: ProjectAggregate,
): (SkillEvent | SkillDetachedFromAgent)[] => {
  const now = command.metadata.now;
  switch (command.type) {
    case 'CreateSkill':
      return [created(state, command.data, now)];
    case 'PutSkill': {
      const project = requireLiveProject(state.project);
      const current = findByRef(state.skills.values(), command.data.ref);
      if (!current) {
        if (!command.data.type) throw invalid('Missing "type" field for skill', 'Missing field');
        // MindsDB creates a missing skill under the URL's name, whatever the body says.
        const params = command.data.params ?? {};
        return [created(state, { name: command.data.ref, type: command.data.type, params }, now)];
      }
      checkVersion(current, command.data.expectedVersion);
      const name = command.data.name ?? current.name;
      const clash = findByName(state.skills.values(), name);
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
    }
    case 'DeleteSkill': {
      requireLiveProject(state.project);
      const skill = requireSkill(state, command.data.ref);
      checkVersion(skill, command.data.expectedVersion);
      return removeSkill(state, skill, now, `skill '${skill.name}' was deleted`);
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
};
