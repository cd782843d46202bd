import { toMindsDbTimestamp } from '../shared/time';
import type { AgentRow } from './projection';

type AgentView = Record<string, unknown> & { id: number; name: string };
export type PresentedAgent = { view: AgentView; version: bigint };

/** A skill as an agent shows it (MindsDB's skill dict). */
export type LinkedSkill = Record<string, unknown> & { id: number };

/**
 * MindsDB's `Agents.as_dict`: with skills, params whole (and the skills' dicts); without, `model`,
 * `data` and `prompt_template` lifted out of params. Secrets were masked by the projection.
 */
export const presentAgent = (row: AgentRow, skills: readonly LinkedSkill[]): PresentedAgent => {
  const view: AgentView = {
    id: Number(row.ID),
    name: row.NAME,
    project_id: Number(row.PROJECT_ID),
    created_at: toMindsDbTimestamp(row.CREATED_AT),
    updated_at: toMindsDbTimestamp(row.UPDATED_AT),
  };
  if (row.MODEL_NAME) view.model_name = row.MODEL_NAME;
  if (row.PROVIDER) view.provider = row.PROVIDER;
  const params = JSON.parse(row.PARAMS) as Record<string, unknown>;
  if (row.SKILL_IDS.length > 0) {
    view.skills = row.SKILL_IDS.map((id) => skills.find((s) => BigInt(s.id) === id)).filter(
      (s) => s !== undefined,
    );
    view.skills_extra_parameters = JSON.parse(row.SKILLS_EXTRA_PARAMETERS) as Record<string, unknown>;
    view.params = params;
  } else {
    const { data, model, prompt_template, ...rest } = params;
    if (data !== undefined) view.data = data;
    if (model !== undefined) view.model = model;
    if (prompt_template !== undefined) view.prompt_template = prompt_template;
    if (Object.keys(rest).length > 0) view.params = rest;
  }
  return { view, version: row.VERSION };
};
