import type { SkillDeleted } from '../../events';
import type { RecordedEvent } from '../../events';
import { defineProjectSlice } from '../projects/state';
import { notFound } from '../shared/errors';
import { findByRef, type Params } from '../shared/params';

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

export const evolveSkills = (skills: SkillsState, event: RecordedEvent): SkillsState => {
  switch (event.type) {
    case 'SkillCreated': {
      const id = event.meta.position;
      return new Map(skills).set(id, {
        id,
        name: event.data.name,
        type: event.data.type,
        params: event.data.params,
        createdAt: event.data.createdAt,
        updatedAt: event.data.createdAt,
        version: id,
      });
    }
    case 'SkillUpdated': {
      const current = skills.get(BigInt(event.data.skillId));
      if (!current) return skills;
      return new Map(skills).set(current.id, {
        ...current,
        name: event.data.name,
        type: event.data.type,
        params: event.data.params,
        updatedAt: event.data.updatedAt,
        version: event.meta.position,
      });
    }
    case 'SkillDeleted': {
      const next = new Map(skills);
      next.delete(BigInt(event.data.skillId));
      return next;
    }
    default:
      return skills;
  }
};

/** `text2sql` is MindsDB's legacy name of `sql`. */
export const canonicalSkillType = (type: string) =>
  type.toLowerCase() === 'text2sql' ? 'sql' : type.toLowerCase();

export const requireSkill = (skills: SkillsState, ref: string): Skill => {
  const skill = findByRef(skills.values(), ref);
  if (!skill) throw notFound(`Skill with name ${ref} not found.`, 'Skill not found');
  return skill;
};

export const skillsSlice = defineProjectSlice({
  key: 'skills',
  initial: (): SkillsState => new Map(),
  evolve: evolveSkills,
  cascade: (skills, project, at) =>
    [...skills.values()].map((s): SkillDeleted => ({
      type: 'SkillDeleted',
      data: { projectId: Number(project.id), skillId: Number(s.id), name: s.name, deletedAt: at },
    })),
});
