import { z } from 'zod';
import { looseName, params } from '../shared/resourceSchemas';
import type { SkillRef } from './decider';

export const agentsPath = z.object({ project: z.string().min(1) });
export const agentPath = z.object({ project: z.string().min(1), agent: z.string().min(1) });

/** A skill by name or id, or `{name, ...link parameters}` (e.g. `tables` narrowing a sql skill). */
const skillRef = z.union([
  z.string().min(1),
  z.number().int(),
  z.object({ name: z.string().min(1) }).catchall(z.unknown()),
]);

const agentFields = {
  model_name: z.string().min(1).nullable().optional(),
  provider: z.string().min(1).nullable().optional(),
  params: params.optional(),
  /** The v25.8+ "data-centric" shape: stored inside params, shown at the top level. */
  model: params.optional(),
  data: z
    .object({ tables: z.array(z.string()).optional(), knowledge_bases: z.array(z.string()).optional() })
    .strict()
    .optional(),
  prompt_template: z.string().optional(),
};

export const createAgentBody = z.object({
  agent: z.object(
    { name: looseName('agent'), ...agentFields, skills: z.array(skillRef).optional() },
    { error: 'Must provide "agent" parameter in POST body' },
  ),
});

export const updateAgentBody = z.object({
  agent: z.object(
    {
      name: looseName('agent').optional(),
      ...agentFields,
      skills: z.array(skillRef).optional(),
      skills_to_add: z.array(skillRef).optional(),
      skills_to_remove: z.array(z.union([z.string().min(1), z.number().int()])).optional(),
    },
    { error: 'Must provide "agent" parameter in PUT body' },
  ),
});

type AgentFields = {
  params?: Record<string, unknown>;
  model?: Record<string, unknown>;
  data?: { tables?: string[]; knowledge_bases?: string[] };
  prompt_template?: string;
};

/** MindsDB keeps `model`, `data` and `prompt_template` inside params. */
export const foldParams = (body: AgentFields): Record<string, unknown> => ({
  ...(body.params ?? {}),
  ...(body.model !== undefined ? { model: body.model } : {}),
  ...(body.data !== undefined ? { data: body.data } : {}),
  ...(body.prompt_template !== undefined ? { prompt_template: body.prompt_template } : {}),
});

export const toSkillRefs = (refs: z.infer<typeof skillRef>[] | undefined): SkillRef[] | undefined =>
  refs?.map((r) => {
    if (typeof r === 'object') {
      const { name, ...parameters } = r;
      return { ref: name, parameters };
    }
    return { ref: String(r), parameters: {} };
  });

export const agentView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    project_id: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    model_name: z.string().optional(),
    provider: z.string().optional(),
    skills: z.array(z.record(z.string(), z.unknown())).optional(),
    skills_extra_parameters: z.record(z.string(), z.unknown()).optional(),
    params: params.optional(),
    model: params.optional(),
    data: params.optional(),
    prompt_template: z.string().optional(),
  })
  .describe(
    'MindsDB v25.8+ shape: with skills, params whole; without, model/data/prompt_template lifted out',
  );
