import { z } from 'zod';
import { looseName } from '../shared/resourceSchemas';

export const jobsPath = z.object({ project: z.string().min(1) });
export const jobPath = z.object({ project: z.string().min(1), job: z.string().min(1) });

const optionalText = z.string().nullable().optional();

/** MindsDB's POST body: `{"job": {name, query, if_query, start_at, end_at, schedule_str}}`. */
export const createJobBody = z.object({
  job: z.object(
    {
      name: looseName('job'),
      query: z
        .string({ error: 'Missing "query" field for job' })
        .trim()
        .min(1, '"query" of a job must not be empty'),
      if_query: optionalText,
      start_at: optionalText.describe("'YYYY-MM-DD HH:MM:SS' (UTC), 'YYYY-MM-DD' or 'now'; default now"),
      end_at: optionalText,
      schedule_str: optionalText.describe('"every 2 hours", "every day", …; none: the job runs once'),
    },
    { error: 'Must provide "job" parameter in POST body' },
  ),
});

export const jobView = z.object({
  id: z.number().int(),
  name: z.string(),
  project: z.string(),
  start_at: z.string().nullable(),
  end_at: z.string().nullable(),
  next_run_at: z.string().nullable(),
  schedule_str: z.string().nullable(),
  query: z.string(),
  if_query: z.string().nullable(),
  variables: z.record(z.string(), z.unknown()),
});

export const jobRunView = z.object({
  name: z.string(),
  project: z.string(),
  run_start: z.string().nullable(),
  run_end: z.string().nullable(),
  error: z.string().nullable(),
  query: z.string(),
  run: z.number().int(),
  status: z.enum(['running', 'finished', 'failed', 'skipped', 'abandoned']),
  scheduled_at: z.string().nullable(),
});
