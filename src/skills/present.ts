import { maskSecrets } from '../shared/secrets';
import { toMindsDbTimestamp } from '../shared/time';
import type { SkillRow } from './projection';
import type { SkillView } from './schemas';
import type { Skill } from './state';

export type PresentedSkill = SkillView & { version: bigint };

/** MindsDB's `Skills.as_dict` (secrets were masked by the projection). */
export const presentSkill = (row: SkillRow): PresentedSkill => ({
  id: Number(row.ID),
  name: row.NAME,
  project_id: Number(row.PROJECT_ID),
  agent_ids: row.AGENT_IDS.map(Number),
  type: row.TYPE,
  params: JSON.parse(row.PARAMS) as Record<string, unknown>,
  created_at: toMindsDbTimestamp(row.CREATED_AT),
  updated_at: toMindsDbTimestamp(row.UPDATED_AT),
  version: row.VERSION,
});

/**
 * The answer to a write, from the state its command produced: what `presentSkill` gives for the
 * row the projection makes of the same events (secrets masked alike; `agentIds`: the agents using
 * it, in id order).
 */
export const presentSkillState = (
  skill: Skill,
  projectId: bigint,
  agentIds: readonly bigint[],
): PresentedSkill => ({
  id: Number(skill.id),
  name: skill.name,
  project_id: Number(projectId),
  agent_ids: agentIds.map(Number),
  type: skill.type,
  params: maskSecrets(skill.params),
  created_at: toMindsDbTimestamp(skill.createdAt),
  updated_at: toMindsDbTimestamp(skill.updatedAt),
  version: skill.version,
});

/** The answer body: the version travels as the ETag, not in the body. */
export const skillBody = ({ version: _v, ...view }: PresentedSkill): SkillView => view;
