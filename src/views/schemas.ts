import { z } from 'zod';
import { looseName } from '../shared/resourceSchemas';

export const viewsPath = z.object({ project: z.string().min(1) });
export const viewPath = z.object({ project: z.string().min(1), view: z.string().min(1) });

const query = z
  .string({ error: 'Missing "query" field for view' })
  .trim()
  .min(1, '"query" of a view must not be empty');

/** MindsDB's POST body: `{"view": {name, query}}`. */
export const createViewBody = z.object({
  view: z.object({ name: looseName('view'), query }, { error: 'Must provide "view" parameter in POST body' }),
});

/** PUT: an upsert, the path names the view. */
export const putViewBody = z.object({
  view: z.object({ query }, { error: 'Must provide "view" parameter in PUT body' }),
});
export const viewView = z.object({ id: z.number().int(), name: z.string(), query: z.string() });
