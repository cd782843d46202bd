import type { SkillDeleted } from '../../events';
import type { RecordedEvent } from '../../events';
import { defineProjectSlice, type ProjectContents, type ProjectRef } from '../shared/projectState';
import { notFound } from '../shared/errors';
import { Map as ImmutableMap } from 'immutable';
import type { Params } from '../shared/params';
import { firstVersion, nextVersion, type Versioned } from '../shared/resourceState';

export type Skill = {
  readonly id: bigint;
  readonly name: string;
  readonly type: string;
  readonly params: Params;
} & Versioned;
/**
 * A project's skills by id, and their ids by lower-cased name. Persistent maps: an event changes one
 * entry and shares the rest, so deciding in a project with thousands of skills costs what it costs in
 * an empty one (a copied Map cost 0.2 ms per event at 3,000 skills).
 */
export type SkillsState = {
  readonly byId: ImmutableMap<bigint, Skill>;
  readonly idByName: ImmutableMap<string, bigint>;
};

const emptySkills: SkillsState = { byId: ImmutableMap(), idByName: ImmutableMap() };

const withSkill = (skills: SkillsState, before: Skill | undefined, skill: Skill): SkillsState => ({
  byId: skills.byId.set(skill.id, skill),
  idByName: (before ? skills.idByName.delete(before.name.toLowerCase()) : skills.idByName).set(
    skill.name.toLowerCase(),
    skill.id,
  ),
});

const evolveSkills = (skills: SkillsState, event: RecordedEvent): SkillsState => {
  switch (event.type) {
    case 'SkillCreated': {
      const { name, type, params, createdAt } = event.data;
      return withSkill(skills, undefined, firstVersion(event, createdAt, { name, type, params }));
    }
    case 'SkillUpdated': {
      const current = skills.byId.get(BigInt(event.data.skillId));
      if (!current) return skills;
      const { name, type, params, updatedAt } = event.data;
      return withSkill(skills, current, nextVersion(current, event, updatedAt, { name, type, params }));
    }
    case 'SkillDeleted': {
      const current = skills.byId.get(BigInt(event.data.skillId));
      if (!current) return skills;
      return {
        byId: skills.byId.delete(current.id),
        idByName: skills.idByName.delete(current.name.toLowerCase()),
      };
    }
    default:
      return skills;
  }
};

/** The skill with this name (any case). */
export const skillByName = (skills: SkillsState, name: string): Skill | undefined => {
  const id = skills.idByName.get(name.toLowerCase());
  return id === undefined ? undefined : skills.byId.get(id);
};

/** The skill a client names by id or by name (an id wins over an all-digit name). */
export const skillByRef = (skills: SkillsState, ref: string): Skill | undefined =>
  (/^\d+$/.test(ref) ? skills.byId.get(BigInt(ref)) : undefined) ?? skillByName(skills, ref);

export const skillById = (skills: SkillsState, id: bigint): Skill | undefined => skills.byId.get(id);

/** Every skill, in id order. */
const allSkills = (skills: SkillsState): Skill[] =>
  [...skills.byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** `text2sql` is MindsDB's legacy name of `sql`. */
export const canonicalSkillType = (type: string) =>
  type.toLowerCase() === 'text2sql' ? 'sql' : type.toLowerCase();

export const requireSkill = (skills: SkillsState, ref: string): Skill => {
  const skill = skillByRef(skills, ref);
  if (!skill) throw notFound(`Skill with name ${ref} not found.`, 'Skill not found');
  return skill;
};

/** The event deleting `skill`: its DELETE's and its project's deletion's. */
export const skillDeleted = (skill: Skill, project: ProjectRef, at: string): SkillDeleted => ({
  type: 'SkillDeleted',
  data: { projectId: Number(project.id), skillId: Number(skill.id), name: skill.name, deletedAt: at },
});

export const skillsSlice = defineProjectSlice({
  key: 'skills',
  initial: (): SkillsState => emptySkills,
  evolve: evolveSkills,
  cascade: (skills, project, at) => allSkills(skills).map((skill) => skillDeleted(skill, project, at)),
});

/** The agents' state as a project's stream holds it (read here through ProjectContents, not imported). */
type AgentsState = ProjectContents['agents'];

/**
 * The agents linked to a skill, in the order the state holds them. Here, not with the agents: the
 * agents' rules read the skills, so the skills' read the agents' state by its key in
 * ProjectContents only (importing the agents' folder would close a cycle).
 */
export const agentsUsingSkill = (
  agents: AgentsState,
  skillId: bigint,
): NonNullable<ReturnType<AgentsState['get']>>[] =>
  [...agents.values()].filter((agent) => agent.skills.some((link) => link.skillId === skillId));
