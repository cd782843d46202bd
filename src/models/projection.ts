import type { LlmModelReady, ModelTrained, ModelVersionDefined } from '../../events';
import {
  allHandled,
  selectColumns,
  selectRow,
  selectRows,
  tableProjection,
  type RowOf,
} from '../projection/table';
import { columns } from '../projection/columns';
import type { Row, RowStore, TableReader } from '../projection/types';
import { nameKey } from '../shared/names';
import { maskSecrets } from '../shared/secrets';
import { VERSION } from '../shared/version';

const keyOf = (projectId: number, name: string, version: number) =>
  `${projectId}:${nameKey(name)}:${version}`;

/** A model's versions: its project's rows read by the table, its name compared as names are. */
const versionsOf = (rows: RowStore, projectId: number, name: string) =>
  rows.scan({ PROJECT_ID: BigInt(projectId) }, (r: Row) => nameKey(String(r.NAME)) === nameKey(name));

/** A version's row as its definition makes it: `id` is the model's (its first version's position). */
const definedRow = (d: ModelVersionDefined['data'], id: bigint, position: bigint): Row => ({
  KEY: keyOf(d.projectId, d.name, d.version),
  ID: id,
  NAME: d.name,
  ENGINE: d.engine,
  PROJECT: d.project,
  PROJECT_ID: d.projectId,
  ACTIVE: false,
  VERSION: d.version,
  STATUS: 'generating',
  ACCURACY: null,
  PREDICT: d.target,
  UPDATE_STATUS: 'up_to_date',
  MINDSDB_VERSION: VERSION,
  ERROR: null,
  SELECT_DATA_QUERY: maskSecrets(d.query, 'query'),
  TRAINING_OPTIONS: trainingOptions(d.target, d.timeseries ?? null, d.options),
  CURRENT_TRAINING_PHASE: PHASES.generating[0],
  TOTAL_TRAINING_PHASES: TOTAL_PHASES,
  TRAINING_PHASE_NAME: PHASES.generating[1],
  TAG: typeof d.options.tag === 'string' ? d.options.tag : null,
  CREATED_AT: d.definedAt,
  TRAINING_TIME: null,
  SOURCE_DATABASE: d.sourceDatabase,
  ARTIFACT_DIGEST: null,
  TRAINER: null,
  METRIC: null,
  COLUMNS: null,
  VERSION_POSITION: position,
  TRAINING_PROGRESS: 0,
  TRAINING_ROWS: null,
  TASK: d.timeseries ? 'forecast' : null,
  TARGET_TYPE: null,
  TARGET_TYPE_SOURCE: null,
  TARGET_DTYPE: null,
  TIMESERIES: d.timeseries ?? null,
});

/** A trained version's cells. */
const trainedCells = (d: ModelTrained['data']) => ({
  STATUS: 'complete',
  ACCURACY: d.accuracy,
  METRIC: d.metric,
  ARTIFACT_DIGEST: d.artifactDigest,
  COLUMNS: d.columns,
  TRAINING_TIME: d.trainingMs / 1000,
  CURRENT_TRAINING_PHASE: TOTAL_PHASES,
  TRAINING_PHASE_NAME: 'Complete',
  TRAINING_PROGRESS: 100,
  TRAINING_ROWS: d.rows,
  TASK: d.task ?? null,
  TARGET_TYPE: d.targetType ?? null,
  TARGET_TYPE_SOURCE: d.targetTypeSource ?? null,
  TARGET_DTYPE: d.targetDtype ?? null,
});

/** An LLM model's version: nothing learnt, so complete at once; DESCRIBE lists the columns its prompt reads. */
const llmReadyCells = (d: LlmModelReady['data']) => ({
  STATUS: 'complete',
  ACCURACY: null,
  METRIC: null,
  COLUMNS: d.inputs.map((name) => ({ name, dtype: 'text', encoder: 'prompt', role: 'feature' })),
  TRAINING_TIME: 0,
  CURRENT_TRAINING_PHASE: TOTAL_PHASES,
  TRAINING_PHASE_NAME: 'Complete',
  TRAINING_PROGRESS: 100,
  TASK: 'llm',
  TARGET_DTYPE: d.mode === 'json_struct' ? 'json' : 'text',
});

/** Changes the row of one version, if the table has it. */
const changeRow = async (
  rows: RowStore,
  d: { projectId: number; name: string; version: number },
  change: (row: Row) => Row,
) => {
  const row = await rows.get(keyOf(d.projectId, d.name, d.version));
  if (row) rows.put(change(row));
};

/** MindsDB's training phases (CURRENT_TRAINING_PHASE of TOTAL_TRAINING_PHASES, TRAINING_PHASE_NAME). */
const PHASES = {
  generating: [1, 'Generating'],
  reading: [2, 'Reading data'],
  encoding: [3, 'Encoding'],
  training: [4, 'Training'],
  calibrating: [5, 'Calibrating'],
} as const;
const TOTAL_PHASES = 5;

type TimeSeries = { orderBy: string; groupBy: string[]; window: number | null; horizon: number | null };

/** MindsDB's problem_definition: the target, the time-series settings of a forecaster, USING (masked). */
const trainingOptions = (target: unknown, timeseries: TimeSeries | null, using: Record<string, unknown>) =>
  maskSecrets({
    target,
    ...(timeseries
      ? {
          timeseries_settings: {
            is_timeseries: true,
            order_by: timeseries.orderBy,
            group_by: timeseries.groupBy,
            window: timeseries.window,
            horizon: timeseries.horizon,
          },
        }
      : {}),
    using,
  });

/** `models`: one row per model version, MindsDB's information_schema.MODELS columns first. */
export const modelsTable = tableProjection({
  table: 'models',
  key: 'KEY',
  history: true,
  columns: columns(
    `NAME VARCHAR, ENGINE VARCHAR, PROJECT VARCHAR, ACTIVE BOOLEAN, VERSION INTEGER, STATUS VARCHAR,
    ACCURACY DOUBLE NULL, PREDICT VARCHAR, UPDATE_STATUS VARCHAR, MINDSDB_VERSION VARCHAR,
    ERROR VARCHAR NULL, SELECT_DATA_QUERY VARCHAR, TRAINING_OPTIONS JSON, CURRENT_TRAINING_PHASE INTEGER,
    TOTAL_TRAINING_PHASES INTEGER, TRAINING_PHASE_NAME VARCHAR, TAG VARCHAR NULL, CREATED_AT TIMESTAMP,
    TRAINING_TIME DOUBLE NULL, KEY VARCHAR, ID BIGINT, PROJECT_ID BIGINT, SOURCE_DATABASE VARCHAR,
    ARTIFACT_DIGEST VARCHAR NULL, TRAINER VARCHAR NULL, METRIC VARCHAR NULL, COLUMNS JSON NULL,
    VERSION_POSITION BIGINT`,
    /** Percentage of the whole training (0–100), from the coarse progress reports. */
    'TRAINING_PROGRESS INTEGER',
    /** Rows the training query returned; once trained, the rows learnt from (a usable target). */
    'TRAINING_ROWS BIGINT NULL',
    `TASK VARCHAR NULL, TARGET_TYPE VARCHAR NULL, TARGET_TYPE_SOURCE VARCHAR NULL, TARGET_DTYPE VARCHAR NULL,
    TIMESERIES JSON NULL`,
  ),
  handles: [
    'ModelVersionDefined',
    'ModelTrainingStarted',
    'ModelTrainingProgressed',
    'ModelTrained',
    'ModelTrainingFailed',
    'ModelVersionActivated',
    'ModelOptionsUpdated',
    'ModelVersionDeleted',
    'ModelDeleted',
    'LlmModelReady',
  ],
  apply: async (event, rows) => {
    switch (event.type) {
      case 'ModelVersionDefined': {
        const d = event.data;
        const first = (await versionsOf(rows, d.projectId, d.name))[0];
        rows.put(
          definedRow(d, (first?.ID as bigint | undefined) ?? event.meta.position, event.meta.position),
        );
        return;
      }
      case 'ModelTrainingStarted': {
        const { trainer } = event.data;
        await changeRow(rows, event.data, (row) => ({
          ...row,
          STATUS: 'training',
          CURRENT_TRAINING_PHASE: PHASES.reading[0],
          TRAINING_PHASE_NAME: PHASES.reading[1],
          TRAINER: trainer,
        }));
        return;
      }
      case 'ModelTrainingProgressed': {
        const d = event.data;
        const [current, name] = PHASES[d.phase];
        // Only the training of this very version, while it trains: a late report of a replaced
        // model's training, or one appended after the outcome, changes nothing.
        await changeRow(rows, d, (row) =>
          row.STATUS === 'training' && row.VERSION_POSITION === BigInt(d.versionId)
            ? {
                ...row,
                CURRENT_TRAINING_PHASE: current,
                TRAINING_PHASE_NAME: name,
                TRAINING_PROGRESS: d.percent,
                TRAINING_ROWS: d.rows,
              }
            : row,
        );
        return;
      }
      case 'ModelTrained': {
        const d = event.data;
        await changeRow(rows, d, (row) => ({ ...row, ...trainedCells(d) }));
        return;
      }
      case 'LlmModelReady': {
        const d = event.data;
        await changeRow(rows, d, (row) => ({ ...row, ...llmReadyCells(d) }));
        return;
      }
      case 'ModelTrainingFailed': {
        const { error } = event.data;
        await changeRow(rows, event.data, (row) => ({
          ...row,
          STATUS: 'error',
          ERROR: error,
          TRAINING_PHASE_NAME: 'Error',
        }));
        return;
      }
      case 'ModelVersionActivated': {
        const d = event.data;
        const key = keyOf(d.projectId, d.name, d.version);
        if (!(await rows.get(key))) return;
        for (const r of await versionsOf(rows, d.projectId, d.name))
          rows.put({ ...r, ACTIVE: r.KEY === key });
        return;
      }
      case 'ModelOptionsUpdated': {
        const { options } = event.data;
        await changeRow(rows, event.data, (row) => ({
          ...row,
          TRAINING_OPTIONS: trainingOptions(
            row.PREDICT,
            (row.TIMESERIES as TimeSeries | null) ?? null,
            options,
          ),
        }));
        return;
      }
      case 'ModelVersionDeleted': {
        const d = event.data;
        const key = keyOf(d.projectId, d.name, d.version);
        if (await rows.get(key)) rows.delete(key);
        return;
      }
      case 'ModelDeleted':
        for (const r of await versionsOf(rows, event.data.projectId, event.data.name))
          rows.delete(String(r.KEY));
        return;
      default:
        return allHandled(event);
    }
  },
});

export type ModelRow = RowOf<typeof modelsTable.columns>;

export const modelRowsOfProject = async (reader: TableReader, projectId: number) =>
  selectRows(modelsTable, reader, 'SELECT * FROM models WHERE PROJECT_ID = ? ORDER BY ID, VERSION', [
    BigInt(projectId),
  ]);

/** One version of a project's model (names match in any case). */
export const modelVersionRow = async (
  reader: TableReader,
  projectId: number,
  name: string,
  version: number,
) =>
  selectRow(
    modelsTable,
    reader,
    'SELECT * FROM models WHERE PROJECT_ID = ? AND lower(NAME) = ? AND VERSION = ? LIMIT 1',
    [BigInt(projectId), name.toLowerCase(), version],
  );

/** Versions some process was defining or training: after a crash, their trainer is gone. */
export const unfinishedVersions = async (reader: TableReader) =>
  selectColumns(
    modelsTable,
    ['PROJECT', 'NAME', 'VERSION', 'STATUS', 'TRAINER'],
    reader,
    `FROM models WHERE STATUS IN ('generating', 'training')`,
  );
