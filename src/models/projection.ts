import type { Row, RowStore, TableProjection, TableReader } from '../projection/types';
import { nameKey } from '../shared/names';
import { maskSecrets } from '../shared/secrets';
import { VERSION } from '../shared/version';

const keyOf = (projectId: number, name: string, version: number) =>
  `${projectId}:${nameKey(name)}:${version}`;

const sameModel = (projectId: number, name: string) => (r: Row) =>
  r.PROJECT_ID === BigInt(projectId) && nameKey(String(r.NAME)) === nameKey(name);

/** Changes the row of one version, if the table has it. */
const changeRow = async (
  rows: RowStore,
  d: { projectId: number; name: string; version: number },
  change: (row: Row) => Row,
) => {
  const row = await rows.get(keyOf(d.projectId, d.name, d.version));
  if (row) rows.put(change(row));
};

/** `models`: one row per model version, MindsDB's information_schema.MODELS columns first. */
export const modelsTable: TableProjection = {
  table: 'models',
  key: 'KEY',
  columns: [
    { name: 'NAME', type: 'VARCHAR' },
    { name: 'ENGINE', type: 'VARCHAR' },
    { name: 'PROJECT', type: 'VARCHAR' },
    { name: 'ACTIVE', type: 'BOOLEAN' },
    { name: 'VERSION', type: 'INTEGER' },
    { name: 'STATUS', type: 'VARCHAR' },
    { name: 'ACCURACY', type: 'DOUBLE' },
    { name: 'PREDICT', type: 'VARCHAR' },
    { name: 'UPDATE_STATUS', type: 'VARCHAR' },
    { name: 'MINDSDB_VERSION', type: 'VARCHAR' },
    { name: 'ERROR', type: 'VARCHAR' },
    { name: 'SELECT_DATA_QUERY', type: 'VARCHAR' },
    { name: 'TRAINING_OPTIONS', type: 'JSON' },
    { name: 'CURRENT_TRAINING_PHASE', type: 'INTEGER' },
    { name: 'TOTAL_TRAINING_PHASES', type: 'INTEGER' },
    { name: 'TRAINING_PHASE_NAME', type: 'VARCHAR' },
    { name: 'TAG', type: 'VARCHAR' },
    { name: 'CREATED_AT', type: 'TIMESTAMP' },
    { name: 'TRAINING_TIME', type: 'DOUBLE' },
    { name: 'KEY', type: 'VARCHAR' },
    { name: 'ID', type: 'BIGINT' },
    { name: 'PROJECT_ID', type: 'BIGINT' },
    { name: 'SOURCE_DATABASE', type: 'VARCHAR' },
    { name: 'ARTIFACT_DIGEST', type: 'VARCHAR' },
    { name: 'TRAINER', type: 'VARCHAR' },
    { name: 'METRIC', type: 'VARCHAR' },
    { name: 'COLUMNS', type: 'JSON' },
    { name: 'VERSION_POSITION', type: 'BIGINT' },
  ],
  handles: [
    'ModelVersionDefined',
    'ModelTrainingStarted',
    'ModelTrained',
    'ModelTrainingFailed',
    'ModelVersionActivated',
    'ModelOptionsUpdated',
    'ModelVersionDeleted',
    'ModelDeleted',
  ],
  apply: async (event, rows) => {
    switch (event.type) {
      case 'ModelVersionDefined': {
        const d = event.data;
        const first = (await rows.scan(sameModel(d.projectId, d.name)))[0];
        rows.put({
          KEY: keyOf(d.projectId, d.name, d.version),
          ID: (first?.ID as bigint | undefined) ?? event.meta.position,
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
          SELECT_DATA_QUERY: d.query,
          TRAINING_OPTIONS: maskSecrets({ target: d.target, using: d.options }),
          CURRENT_TRAINING_PHASE: 1,
          TOTAL_TRAINING_PHASES: 3,
          TRAINING_PHASE_NAME: 'Generating',
          TAG: typeof d.options.tag === 'string' ? d.options.tag : null,
          CREATED_AT: d.definedAt,
          TRAINING_TIME: null,
          SOURCE_DATABASE: d.sourceDatabase,
          ARTIFACT_DIGEST: null,
          TRAINER: null,
          METRIC: null,
          COLUMNS: null,
          VERSION_POSITION: event.meta.position,
        });
        return;
      }
      case 'ModelTrainingStarted': {
        const { trainer } = event.data;
        await changeRow(rows, event.data, (row) => ({
          ...row,
          STATUS: 'training',
          CURRENT_TRAINING_PHASE: 2,
          TRAINING_PHASE_NAME: 'Training',
          TRAINER: trainer,
        }));
        return;
      }
      case 'ModelTrained': {
        const d = event.data;
        await changeRow(rows, d, (row) => ({
          ...row,
          STATUS: 'complete',
          ACCURACY: d.accuracy,
          METRIC: d.metric,
          ARTIFACT_DIGEST: d.artifactDigest,
          COLUMNS: d.columns,
          TRAINING_TIME: d.trainingMs / 1000,
          CURRENT_TRAINING_PHASE: 3,
          TRAINING_PHASE_NAME: 'Complete',
        }));
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
        for (const r of await rows.scan(sameModel(d.projectId, d.name)))
          rows.put({ ...r, ACTIVE: r.KEY === key });
        return;
      }
      case 'ModelOptionsUpdated': {
        const { options } = event.data;
        await changeRow(rows, event.data, (row) => ({
          ...row,
          TRAINING_OPTIONS: maskSecrets({ target: row.PREDICT, using: options }),
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
        for (const r of await rows.scan(sameModel(event.data.projectId, event.data.name)))
          rows.delete(String(r.KEY));
        return;
    }
  },
};

export type ModelRow = {
  ID: bigint;
  NAME: string;
  ENGINE: string;
  PROJECT: string;
  ACTIVE: boolean;
  VERSION: number;
  STATUS: string;
  ACCURACY: number | null;
  PREDICT: string;
  ERROR: string | null;
  SELECT_DATA_QUERY: string;
  TRAINING_OPTIONS: string;
  TAG: string | null;
  CREATED_AT: Date;
  TRAINING_TIME: number | null;
  SOURCE_DATABASE: string;
  COLUMNS: string | null;
  METRIC: string | null;
  ARTIFACT_DIGEST: string | null;
  UPDATE_STATUS: string;
};

export const modelRowsOfProject = async (reader: TableReader, projectId: number) =>
  (await reader.query('SELECT * FROM models WHERE PROJECT_ID = ? ORDER BY ID, VERSION', [
    BigInt(projectId),
  ])) as ModelRow[];

/** Versions some process was defining or training: after a crash, their trainer is gone. */
export const unfinishedVersions = async (reader: TableReader) =>
  (await reader.query(
    `SELECT PROJECT, NAME, VERSION, STATUS, TRAINER FROM models WHERE STATUS IN ('generating', 'training')`,
  )) as { PROJECT: string; NAME: string; VERSION: number; STATUS: string; TRAINER: string | null }[];
