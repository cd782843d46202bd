import { toMindsDbTimestamp } from '../shared/time';
import type { SkillRow } from './projection';
import type { SkillView } from './schemas';

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

/** The answer body: the version travels as the ETag, not in the body. */
export const skillBody = ({ version: _v, ...view }: PresentedSkill): SkillView => view;
