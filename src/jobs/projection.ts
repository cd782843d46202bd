import type { JobEvery } from '../../events';
import {
  patchRow,
  projectResourceReads,
  deletableTable,
  projectResourceTable,
} from '../projection/resourceTable';
import { CREATED_AT, NAME_AND_PROJECT, RESOURCE_IDS } from '../projection/resourceColumns';
import { allHandled, selectRows, type RowOf } from '../projection/table';
import { columns } from '../projection/columns';
import type { Row, TableReader } from '../projection/types';
import { maskSecrets } from '../shared/secrets';
import { nextTick, scheduleStr, type JobSchedule } from './schedule';
import { timestampText } from '../shared/time';

/** A job row's schedule, as the columns hold it (dates come back as Dates, JSON parsed). */
const scheduleOf = (row: Row): JobSchedule => ({
  startAt: (row.START_AT as Date).getTime(),
  endAt: row.END_AT === null ? null : (row.END_AT as Date).getTime(),
  every: (row.EVERY as JobEvery | null) ?? null,
});

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * `jobs`: one row per live job (MindsDB's information_schema.JOBS columns first). NEXT_RUN_AT is the
 * job's first tick after the last one claimed: null once a job without EVERY ran, or past its END.
 */
export const jobsTable = projectResourceTable({
  table: 'jobs',
  key: 'ID',
  history: true,
  columns: columns(
    NAME_AND_PROJECT,
    `START_AT TIMESTAMP, END_AT TIMESTAMP NULL, NEXT_RUN_AT TIMESTAMP NULL, SCHEDULE_STR VARCHAR NULL,
    QUERY VARCHAR, IF_QUERY VARCHAR NULL, VARIABLES JSON NULL`,
    RESOURCE_IDS,
    'EVERY JSON NULL, OWNER JSON, LAST_TICK TIMESTAMP NULL, RUNS INTEGER',
    CREATED_AT,
  ),
  handles: ['JobCreated', 'JobDeleted', 'JobRunStarted'],
  createdBy: {
    type: 'JobCreated',
    cells: ({ data: d }) => ({
      START_AT: d.startAt,
      END_AT: d.endAt,
      NEXT_RUN_AT: isoOrNull(
        nextTick(
          { startAt: Date.parse(d.startAt), endAt: d.endAt ? Date.parse(d.endAt) : null, every: d.every },
          null,
        ),
      ),
      SCHEDULE_STR: scheduleStr(d.every),
      QUERY: maskSecrets(d.query, 'query'),
      IF_QUERY: maskSecrets(d.ifQuery, 'query'),
      VARIABLES: null,
      EVERY: d.every,
      OWNER: d.owner,
      LAST_TICK: null,
      RUNS: 0,
    }),
  },
  deletedBy: { type: 'JobDeleted', key: (e) => BigInt(e.data.jobId) },
  // JobRunStarted: the job's next tick is the first after the one claimed.
  apply: ({ data: d }, rows) =>
    patchRow(rows, BigInt(d.jobId), (row) => ({
      LAST_TICK: d.tick,
      RUNS: d.run,
      NEXT_RUN_AT: isoOrNull(nextTick(scheduleOf(row), Date.parse(d.tick))),
    })),
});

export type JobRow = RowOf<typeof jobsTable.columns>;

const reads = projectResourceReads(jobsTable);
export const jobRowsOfProject = reads.ofProject;
export const jobRowByName = reads.byName;

/** Jobs whose next tick is not after `now` (the scheduler's candidates). */
export const dueJobRows = async (reader: TableReader, now: Date) =>
  selectRows(
    jobsTable,
    reader,
    'SELECT * FROM jobs WHERE NEXT_RUN_AT <= ?::TIMESTAMP ORDER BY NEXT_RUN_AT, ID',
    [timestampText(now)],
  );

const RUN_END_EVENTS = {
  JobRunFinished: 'finished',
  JobRunFailed: 'failed',
  JobRunSkipped: 'skipped',
  JobRunAbandoned: 'abandoned',
} as const;

/** What a run's STATUS holds: running, then how it ended. */
const JOB_RUN_STATUSES = ['running', ...Object.values(RUN_END_EVENTS)] as const;

/**
 * `job_runs`: one row per run of a live job (MindsDB's jobs_history: NAME, PROJECT, RUN_START,
 * RUN_END, ERROR, QUERY; QUERY is the statements that ran, each followed by `; `), with its status
 * and tick. A job's runs go with it.
 */
export const jobRunsTable = deletableTable({
  table: 'job_runs',
  // Changes with every call, run or batch: other answers are kept through it (readVersions.ts).
  activity: true,
  key: 'RUN_KEY',
  columns: columns(
    `NAME VARCHAR, PROJECT VARCHAR, RUN_START TIMESTAMP, RUN_END TIMESTAMP NULL, ERROR VARCHAR NULL,
    QUERY VARCHAR, RUN_KEY VARCHAR, JOB_ID BIGINT, PROJECT_ID BIGINT, RUN INTEGER, TICK TIMESTAMP`,
    { name: 'STATUS', type: 'VARCHAR', values: JOB_RUN_STATUSES },
    'STATEMENTS INTEGER, NODE VARCHAR, POSITION BIGINT',
  ),
  handles: [
    'JobRunStarted',
    'JobStatementRan',
    'JobRunFinished',
    'JobRunFailed',
    'JobRunSkipped',
    'JobRunAbandoned',
    'JobDeleted',
  ],
  deletedBy: { type: 'JobDeleted', column: 'JOB_ID', id: (e) => e.data.jobId },
  apply: async (event, rows, lookup) => {
    switch (event.type) {
      case 'JobRunStarted': {
        const d = event.data;
        const job = await lookup('jobs').get(BigInt(d.jobId));
        // A run claimed just as its job was deleted leaves no history (the job's went with it).
        if (!job) return;
        rows.insert({
          RUN_KEY: `${d.jobId}:${d.run}`,
          NAME: job.NAME,
          PROJECT: job.PROJECT,
          JOB_ID: d.jobId,
          PROJECT_ID: d.projectId,
          RUN: d.run,
          TICK: d.tick,
          RUN_START: d.startedAt,
          RUN_END: null,
          ERROR: null,
          QUERY: '',
          STATUS: 'running',
          STATEMENTS: 0,
          NODE: d.node,
          POSITION: event.meta.position,
        });
        return;
      }
      case 'JobStatementRan': {
        const d = event.data;
        return patchRow(rows, `${d.jobId}:${d.run}`, (row) => ({
          QUERY: `${String(row.QUERY)}${maskSecrets(d.query, 'query')}; `,
          STATEMENTS: Number(row.STATEMENTS) + 1,
          ERROR: d.error ?? row.ERROR,
        }));
      }
      case 'JobRunFinished':
      case 'JobRunFailed':
      case 'JobRunSkipped':
      case 'JobRunAbandoned': {
        const d = event.data;
        const end =
          event.type === 'JobRunFinished'
            ? event.data.finishedAt
            : event.type === 'JobRunFailed'
              ? event.data.failedAt
              : event.type === 'JobRunSkipped'
                ? event.data.skippedAt
                : event.data.abandonedAt;
        return patchRow(rows, `${d.jobId}:${d.run}`, (row) => ({
          RUN_END: end,
          ERROR:
            event.type === 'JobRunFailed'
              ? event.data.error
              : event.type === 'JobRunAbandoned'
                ? event.data.reason
                : row.ERROR,
          STATUS: RUN_END_EVENTS[event.type],
        }));
      }
      default:
        return allHandled(event);
    }
  },
});

export type JobRunRow = RowOf<typeof jobRunsTable.columns>;

export const jobRunRowsOf = async (reader: TableReader, jobId: bigint) =>
  selectRows(jobRunsTable, reader, 'SELECT * FROM job_runs WHERE JOB_ID = ? ORDER BY RUN', [jobId]);
