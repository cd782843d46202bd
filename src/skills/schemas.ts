import { z } from 'zod';
import { looseName, params } from '../shared/resourceSchemas';

export const skillsPath = z.object({ project: z.string().min(1) });
export const skillPath = z.object({ project: z.string().min(1), skill: z.string().min(1) });
export const skillsQuery = z.object({
  agent: z.string().min(1).optional().describe('Only the skills of this agent (name or id); beyond MindsDB'),
});

export const createSkillBody = z.object({
  skill: z.object(
    {
      name: looseName('skill'),
      type: z
        .string({ error: 'Missing "type" field for skill' })
        .min(1, '"type" of a skill must not be empty'),
      params: z.record(z.string(), z.unknown(), { error: 'Missing "params" field for skill' }),
    },
    { error: 'Must provide "skill" parameter in POST body' },
  ),
});

export const putSkillBody = z.object({
  skill: z.object(
    {
      name: looseName('skill').optional(),
      type: z.string().min(1).optional(),
      params: params.optional(),
    },
    { error: 'Must provide "skill" parameter in PUT body' },
  ),
});

export const skillView = z.object({
  id: z.number().int(),
  name: z.string(),
  project_id: z.number().int(),
  agent_ids: z.array(z.number().int()),
  type: z.string(),
  params: params.describe('Secrets are shown as "******"'),
  created_at: z.string(),
  updated_at: z.string(),
});
export type SkillView = z.infer<typeof skillView>;
