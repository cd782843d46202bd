import {
  at,
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
