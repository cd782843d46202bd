import { toMindsDbTimestamp } from '../shared/time';
import type { JobRow, JobRunRow } from './projection';

const stamp = (d: Date | null) => (d === null ? null : toMindsDbTimestamp(d));

/** A job as MindsDB's REST answers it (`GET /api/projects/{p}/jobs/{j}`). */
export const presentJob = (row: JobRow) => ({
  id: Number(row.ID),
  name: row.NAME,
  project: row.PROJECT,
  start_at: stamp(row.START_AT),
  end_at: stamp(row.END_AT),
  next_run_at: stamp(row.NEXT_RUN_AT),
  schedule_str: row.SCHEDULE_STR,
  query: row.QUERY,
  if_query: row.IF_QUERY,
  variables:
    row.VARIABLES === null
      ? {}
      : typeof row.VARIABLES === 'string'
        ? JSON.parse(row.VARIABLES)
        : row.VARIABLES,
});

/** One run as MindsDB's job history lists it, with what this service also knows (status, tick). */
export const presentJobRun = (row: JobRunRow) => ({
  name: row.NAME,
  project: row.PROJECT,
  run_start: stamp(row.RUN_START),
  run_end: stamp(row.RUN_END),
  error: row.ERROR,
  query: row.QUERY,
  run: row.RUN,
  status: row.STATUS,
  scheduled_at: stamp(row.TICK),
});
