import { z } from 'zod';
import { resourceName } from '../shared/names';

export const projectParams = z.object({ project: z.string().min(1) });
export const createProjectBody = z.object({ name: resourceName('Project') });
export const projectView = z.object({
  id: z.number().int(),
  name: z.string(),
  created_at: z.string().describe('YYYY-MM-DD HH:MM:SS.ffffff (UTC)'),
});
export type ProjectView = z.infer<typeof projectView>;
