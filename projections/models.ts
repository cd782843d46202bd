import type { ModelEvent } from '../events';
import type { Row, TableProjection } from '../src/projection/types';
import { maskSecrets } from '../src/shared/secrets';
import { nameKey } from '../src/shared/names';
import packageJson from '../package.json';

const keyOf = (projectId: number, name: string, version: number) =>
  `${projectId}:${nameKey(name)}:${version}`;

/** `models`: one row per model version, MindsDB's information_schema.MODELS columns first. */
export const modelsProjection: TableProjection = {
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
    const e = event as unknown as ModelEvent;
    const sameModel = (r: Row) =>
      r.PROJECT_ID === BigInt(e.data.projectId) && nameKey(String(r.NAME)) === nameKey(e.data.name);
    if (e.type === 'ModelDeleted') {
      for (const r of await rows.scan(sameModel)) rows.delete(String(r.KEY));
      return;
    }
    const key = keyOf(e.data.projectId, e.data.name, e.data.version);
    if (e.type === 'ModelVersionDefined') {
      const d = e.data;
      const first = (await rows.scan(sameModel))[0];
      rows.put({
        KEY: key,
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
        MINDSDB_VERSION: packageJson.version,
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
    const row = await rows.get(key);
    if (!row) return;
    switch (e.type) {
      case 'ModelTrainingStarted':
        rows.put({
          ...row,
          STATUS: 'training',
          CURRENT_TRAINING_PHASE: 2,
          TRAINING_PHASE_NAME: 'Training',
          TRAINER: e.data.trainer,
        });
        return;
      case 'ModelTrained':
        rows.put({
          ...row,
          STATUS: 'complete',
          ACCURACY: e.data.accuracy,
          METRIC: e.data.metric,
          ARTIFACT_DIGEST: e.data.artifactDigest,
          COLUMNS: e.data.columns,
          TRAINING_TIME: e.data.trainingMs / 1000,
          CURRENT_TRAINING_PHASE: 3,
          TRAINING_PHASE_NAME: 'Complete',
        });
        return;
      case 'ModelTrainingFailed':
        rows.put({ ...row, STATUS: 'error', ERROR: e.data.error, TRAINING_PHASE_NAME: 'Error' });
        return;
      case 'ModelVersionActivated':
        for (const r of await rows.scan(sameModel)) rows.put({ ...r, ACTIVE: r.KEY === key });
        return;
      case 'ModelOptionsUpdated':
        rows.put({ ...row, TRAINING_OPTIONS: maskSecrets({ target: row.PREDICT, using: e.data.options }) });
        return;
      case 'ModelVersionDeleted':
        rows.delete(key);
        return;
    }
  },
};
