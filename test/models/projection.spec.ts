import type { ModelTrainingProgressed } from '../../events';
import {
  at,
  modelTrained,
  modelTrainingStarted,
  modelVersionDefined,
  projectCreated,
  trainedModel,
} from '../support/project';
import { projected } from '../support/projection';

describe('models table', () => {
  it('holds one row per version; the model keeps the id of its first definition; one version is active', async () => {
    const table = await projected([
      projectCreated,
      ...trainedModel('m', 2),
      modelVersionDefined('m', 3, { api_key: 'k' }),
    ]);
    expect(table('models').map((r) => [r.ID, r.VERSION, r.STATUS, r.ACTIVE, r.TRAINING_PHASE_NAME])).toEqual([
      [2n, 1, 'complete', false, 'Complete'],
      [2n, 2, 'complete', true, 'Complete'],
      [2n, 3, 'generating', false, 'Generating'],
    ]);
    expect(table('models')[2]).toEqual(
      expect.objectContaining({ TRAINING_OPTIONS: { target: 'y', using: { api_key: '******' } } }),
    );
  });

  it('shows training and failure, drops versions and whole models', async () => {
    const table = await projected([
      projectCreated,
      modelVersionDefined('m'),
      modelTrainingStarted('m'),
      {
        type: 'ModelTrainingFailed',
        data: { projectId: 1, project: 'proj', name: 'm', version: 1, error: 'no rows', failedAt: at },
      },
      ...trainedModel('n', 2),
      {
        type: 'ModelVersionDeleted',
        data: { projectId: 1, project: 'proj', name: 'n', version: 1, deletedAt: at },
      },
    ]);
    expect(table('models').map((r) => [r.NAME, r.VERSION, r.STATUS, r.ERROR, r.TRAINER])).toEqual([
      ['m', 1, 'error', 'no rows', 'node-1'],
      ['n', 2, 'complete', null, 'node-1'],
    ]);
    const deleted = await projected([
      projectCreated,
      ...trainedModel('m', 2),
      { type: 'ModelDeleted', data: { projectId: 1, project: 'proj', name: 'M', deletedAt: at } },
    ]);
    expect(deleted('models')).toEqual([]);
  });
});

describe('models table: progress and what was learnt', () => {
  const progressed = (
    phase: ModelTrainingProgressed['data']['phase'],
    percent: number,
    versionId = 2,
  ): ModelTrainingProgressed => ({
    type: 'ModelTrainingProgressed',
    data: {
      projectId: 1,
      project: 'proj',
      name: 'm',
      version: 1,
      versionId,
      phase,
      percent,
      rows: 500,
      progressedAt: at,
    },
  });
  const columns = (rows: Record<string, unknown>[]) =>
    rows.map((r) => [
      r.STATUS,
      r.CURRENT_TRAINING_PHASE,
      r.TOTAL_TRAINING_PHASES,
      r.TRAINING_PHASE_NAME,
      r.TRAINING_PROGRESS,
      r.TRAINING_ROWS,
    ]);

  it('shows the phase (of five) and the percentage of a training under way', async () => {
    const table = await projected([
      projectCreated,
      modelVersionDefined('m'),
      modelTrainingStarted('m'),
      progressed('encoding', 15),
    ]);
    expect(columns(table('models'))).toEqual([['training', 3, 5, 'Encoding', 15, 500n]]);
    const started = await projected([projectCreated, modelVersionDefined('m'), modelTrainingStarted('m')]);
    expect(columns(started('models'))).toEqual([['training', 2, 5, 'Reading data', 0, null]]);
  });

  it('ignores reports of another definition of the version (a replaced model) and after the outcome', async () => {
    const table = await projected([
      projectCreated,
      modelVersionDefined('m'),
      modelTrainingStarted('m'),
      progressed('training', 40),
      progressed('training', 60, 99),
      modelTrained('m'),
      progressed('calibrating', 95),
    ]);
    expect(columns(table('models'))).toEqual([['complete', 5, 5, 'Complete', 100, 10n]]);
  });

  it('records the target type, task and time-series settings (problem_definition as MindsDB)', async () => {
    const defined = modelVersionDefined('m', 1, { tag: 't' });
    const trained = modelTrained('m');
    const timeseries = { orderBy: 'day', groupBy: ['store'], window: 7, horizon: 3 };
    const table = await projected([
      projectCreated,
      { ...defined, data: { ...defined.data, timeseries } },
      modelTrainingStarted('m'),
      {
        ...trained,
        data: {
          ...trained.data,
          task: 'forecast',
          targetType: 'numeric',
          targetTypeSource: 'inferred',
          targetDtype: 'float',
        },
      },
      {
        type: 'ModelOptionsUpdated',
        data: { projectId: 1, project: 'proj', name: 'm', version: 1, options: { tag: 'u' }, updatedAt: at },
      },
    ]);
    expect(table('models')[0]).toMatchObject({
      TASK: 'forecast',
      TARGET_TYPE: 'numeric',
      TARGET_TYPE_SOURCE: 'inferred',
      TARGET_DTYPE: 'float',
      TIMESERIES: timeseries,
      TRAINING_OPTIONS: {
        target: 'y',
        timeseries_settings: {
          is_timeseries: true,
          order_by: 'day',
          group_by: ['store'],
          window: 7,
          horizon: 3,
        },
        using: { tag: 'u' },
      },
    });
  });
});
