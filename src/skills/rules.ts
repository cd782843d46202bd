import { z } from 'zod';
import { invalid } from '../shared/errors';
import { ownEntry } from '../shared/ownEntry';
import type { Params } from '../shared/params';
import { canonicalSkillType } from './state';

const tableRef = z.union([
  z.string().min(1),
  z.object({ schema: z.string().optional(), table: z.string().min(1) }),
]);

/**
 * Skill `type` stays free text for compatibility (MindsDB's own tests create "Knowledge Base"); the
 * types an agent can actually run get their params checked when written, not when first used.
 */
const knownTypes: Record<string, z.ZodType<Params>> = {
  sql: z
    .object({
      database: z.string({ error: 'a sql skill names the database it queries' }).min(1),
      tables: z.array(tableRef).optional(),
      description: z.string().optional(),
    })
    .catchall(z.unknown()),
  knowledge_base: z
    .object({
      source: z.string({ error: 'a knowledge_base skill names its knowledge base in "source"' }).min(1),
      description: z.string().optional(),
    })
    .catchall(z.unknown()),
  retrieval: z
    .object({
      source: z.string({ error: 'a retrieval skill names its knowledge base in "source"' }).min(1),
      description: z.string().optional(),
    })
    .catchall(z.unknown()),
};

export const validateSkillParams = (type: string, params: Params) => {
  const schema = ownEntry(knownTypes, canonicalSkillType(type));
  if (!schema) return;
  const result = schema.safeParse(params);
  if (!result.success)
    throw invalid(
      result.error.issues
        .map((i) => `params${i.path.length ? '.' + i.path.join('.') : ''}: ${i.message}`)
        .join('; '),
      `Invalid ${canonicalSkillType(type)} skill`,
    );
};
