import type { ModelDeleted, ModelTrainingFailed, ModelVersionDeleted } from '../../events';
import { decideModel, type ModelCommand } from '../../src/models/decider';
import { decideProject, type ProjectCommand } from '../../src/projects/decider';
import {
  at,
  modelTrained,
  modelTrainingStarted,
  modelVersionActivated,
  modelVersionDefined,
  now,
  projectCreated,
  projectSpec,
  trainedModel,
} from '../support/project';

const spec = projectSpec<ModelCommand>(decideModel);
const metadata = { now };
const definition = { target: 'y', query: 'SELECT * FROM rows', sourceDatabase: 'files', options: {} };
const modelDeleted = (name: string): ModelDeleted => ({
  type: 'ModelDeleted',
  data: { projectId: 1, project: 'proj', name, deletedAt: at },
});

describe('model decider: defining', () => {
  it('defines version 1 of a new model (status generating, no events beyond the definition)', () =>
    spec
      .given([projectCreated])
      .when({ type: 'DefineModel', data: { name: 'm', replace: false, ...definition }, metadata })
      .then([modelVersionDefined('m')]));

  it('refuses a name in use (409) unless OR REPLACE, which deletes the old model first', () => {
    spec
      .given([projectCreated, ...trainedModel('m')])
      .when({ type: 'DefineModel', data: { name: 'M', replace: false, ...definition }, metadata })
      .thenThrows('Conflict', /Model with name M already exists/);
    spec
      .given([projectCreated, ...trainedModel('m', 2)])
      .when({ type: 'DefineModel', data: { name: 'M', replace: true, ...definition }, metadata })
      .then([modelDeleted('m'), modelVersionDefined('m')]);
  });

  it('refuses an engine it does not have (404, MindsDB words)', () =>
    spec
      .given([projectCreated])
      .when({
        type: 'DefineModel',
        data: { name: 'm', replace: false, ...definition, options: { engine: 'openai' } },
        metadata,
      })
      .thenThrows(
        'NotFound',
        /No ML engine named openai exists: make one with CREATE ML_ENGINE openai FROM openai USING openai_api_key = '…'/,
      ));

  it('needs a live project', () =>
    spec
      .given([])
      .when({ type: 'DefineModel', data: { name: 'm', replace: false, ...definition }, metadata })
      .thenThrows('NotFound', /Project name +does not exist/));
});

describe('model decider: retraining', () => {
  it('defines the next version from the active one, options merged', () =>
    spec
      .given([
        projectCreated,
        modelVersionDefined('m', 1, { seed: 1, tag: 'a' }),
        modelVersionActivated('m', 1),
      ])
      .when({ type: 'RetrainModel', data: { name: 'm', options: { tag: 'b' } }, metadata })
      .then([modelVersionDefined('m', 2, { seed: 1, tag: 'b' })]));

  it('numbers after the highest version, even when a dropped one left a gap', () =>
    spec
      .given([
        projectCreated,
        ...trainedModel('m', 3),
        {
          type: 'ModelVersionDeleted',
          data: { projectId: 1, project: 'proj', name: 'm', version: 2, deletedAt: at },
        },
      ])
      .when({ type: 'RetrainModel', data: { name: 'm' }, metadata })
      .then([modelVersionDefined('m', 4)]));

  it('refuses an unknown model (404)', () =>
    spec
      .given([projectCreated])
      .when({ type: 'RetrainModel', data: { name: 'ghost' }, metadata })
      .thenThrows('NotFound', /Model with name ghost not found/));
});

describe('model decider: the training lifecycle', () => {
  it('starts training a generating version, naming the trainer', () =>
    spec
      .given([projectCreated, modelVersionDefined('m')])
      .when({ type: 'StartTraining', data: { name: 'm', version: 1, trainer: 'node-1' }, metadata })
      .then([modelTrainingStarted('m', 1, 'node-1')]));

  it('refuses to start a version twice (409)', () =>
    spec
      .given([projectCreated, modelVersionDefined('m'), modelTrainingStarted('m')])
      .when({ type: 'StartTraining', data: { name: 'm', version: 1, trainer: 'node-2' }, metadata })
      .thenThrows('Conflict', /version 1 is training/));

  it('records a completed training and activates the version', () => {
    const trained = modelTrained('m');
    const { name: _n, version: _v, projectId: _p, project: _pr, trainedAt: _t, ...result } = trained.data;
    spec
      .given([projectCreated, modelVersionDefined('m'), modelTrainingStarted('m')])
      .when({ type: 'CompleteTraining', data: { name: 'm', version: 1, ...result }, metadata })
      .then([trained, modelVersionActivated('m')]);
  });

  it('does not activate a version trained with active = false', () => {
    const {
      name: _n,
      version: _v,
      projectId: _p,
      project: _pr,
      trainedAt: _t,
      ...result
    } = modelTrained('m').data;
    spec
      .given([projectCreated, modelVersionDefined('m', 1, { active: 'false' }), modelTrainingStarted('m')])
      .when({ type: 'CompleteTraining', data: { name: 'm', version: 1, ...result }, metadata })
      .then([modelTrained('m')]);
  });

  it('ignores a completion for a version no longer training (a late or repeated report)', () => {
    const {
      name: _n,
      version: _v,
      projectId: _p,
      project: _pr,
      trainedAt: _t,
      ...result
    } = modelTrained('m').data;
    spec
      .given([projectCreated, ...trainedModel('m')])
      .when({ type: 'CompleteTraining', data: { name: 'm', version: 1, ...result }, metadata })
      .then([]);
  });

  it('records a failure with its reason, once, and never over a completed version', () => {
    const failed: ModelTrainingFailed = {
      type: 'ModelTrainingFailed',
      data: { projectId: 1, project: 'proj', name: 'm', version: 1, error: 'no rows', failedAt: at },
    };
    spec
      .given([projectCreated, modelVersionDefined('m'), modelTrainingStarted('m')])
      .when({ type: 'FailTraining', data: { name: 'm', version: 1, error: 'no rows' }, metadata })
      .then([failed]);
    spec
      .given([projectCreated, modelVersionDefined('m'), modelTrainingStarted('m'), failed])
      .when({ type: 'FailTraining', data: { name: 'm', version: 1, error: 'again' }, metadata })
      .then([]);
    spec
      .given([projectCreated, ...trainedModel('m')])
      .when({ type: 'FailTraining', data: { name: 'm', version: 1, error: 'late' }, metadata })
      .then([]);
    spec
      .given([projectCreated])
      .when({
        type: 'FailTraining',
        data: { name: 'gone', version: 1, error: 'deleted meanwhile' },
        metadata,
      })
      .then([]);
  });
});

describe('model decider: options and deletion', () => {
  it('merges options into the active version, or the one named', () => {
    spec
      .given([projectCreated, modelVersionDefined('m', 1, { a: 1, b: 2 }), modelVersionActivated('m', 1)])
      .when({ type: 'UpdateModelOptions', data: { name: 'm', options: { b: 3 } }, metadata })
      .then([
        {
          type: 'ModelOptionsUpdated',
          data: {
            projectId: 1,
            project: 'proj',
            name: 'm',
            version: 1,
            options: { a: 1, b: 3 },
            updatedAt: at,
          },
        },
      ]);
    spec
      .given([projectCreated, ...trainedModel('m', 2)])
      .when({ type: 'UpdateModelOptions', data: { name: 'm', version: 7, options: {} }, metadata })
      .thenThrows('NotFound', /Model m has no version 7/);
  });

  it('deletes one version, and the whole model with its last version', () => {
    const versionDeleted: ModelVersionDeleted = {
      type: 'ModelVersionDeleted',
      data: { projectId: 1, project: 'proj', name: 'm', version: 1, deletedAt: at },
    };
    spec
      .given([projectCreated, ...trainedModel('m', 2)])
      .when({ type: 'DeleteModel', data: { name: 'm', version: 1 }, metadata })
      .then([versionDeleted]);
    spec
      .given([projectCreated, ...trainedModel('m', 2), versionDeleted])
      .when({ type: 'DeleteModel', data: { name: 'm', version: 2 }, metadata })
      .then([modelDeleted('m')]);
    spec
      .given([projectCreated, ...trainedModel('m', 2)])
      .when({ type: 'DeleteModel', data: { name: 'M' }, metadata })
      .then([modelDeleted('m')]);
  });

  it('removes every model when its project is deleted (the models slice cascade)', () =>
    // The project decider assembles every slice's cascade; models are among them.
    projectSpec<ProjectCommand>(decideProject)
      .given([projectCreated, ...trainedModel('a'), ...trainedModel('b', 2)])
      .when({ type: 'DeleteProject', data: { name: 'proj' }, metadata })
      .then([
        modelDeleted('a'),
        modelDeleted('b'),
        { type: 'ProjectDeleted', data: { projectId: 1, name: 'proj', deletedAt: at } },
      ]));
});

describe('model decider: fine-tuning', () => {
  const newRows = { query: 'SELECT * FROM more_rows', sourceDatabase: 'files2', options: {} };
  const tunedFrom = (
    version: number,
    priorData: { sourceDatabase: string; query: string }[],
    options = {},
  ) => ({
    type: 'ModelVersionDefined' as const,
    data: {
      ...modelVersionDefined('m', version, options).data,
      ...newRows,
      options,
      finetunedFrom: version - 1,
      priorData,
    },
  });

  it('defines the next version from the active one: its target, its rows kept as prior data, the new rows its own', () =>
    spec
      .given([projectCreated, ...trainedModel('m')])
      .when({ type: 'FinetuneModel', data: { name: 'm', ...newRows }, metadata })
      .then([tunedFrom(2, [{ sourceDatabase: 'files', query: 'SELECT * FROM rows' }])]));

  it('keeps every prior data of a fine-tuned version, oldest first, and merges options', () =>
    spec
      .given([
        projectCreated,
        ...trainedModel('m'),
        tunedFrom(2, [{ sourceDatabase: 'files', query: 'SELECT * FROM rows' }], { tag: 'a' }),
        modelTrainingStarted('m', 2),
        modelTrained('m', 2),
        modelVersionActivated('m', 2),
      ])
      .when({ type: 'FinetuneModel', data: { name: 'm', ...newRows, options: { seed: 2 } }, metadata })
      .then([
        tunedFrom(
          3,
          [
            { sourceDatabase: 'files', query: 'SELECT * FROM rows' },
            { sourceDatabase: 'files2', query: 'SELECT * FROM more_rows' },
          ],
          { tag: 'a', seed: 2 },
        ),
      ]));

  it('refuses a version that has not trained (409) and an unknown model or version (404)', () => {
    spec
      .given([projectCreated, modelVersionDefined('m'), modelTrainingStarted('m')])
      .when({ type: 'FinetuneModel', data: { name: 'm', ...newRows }, metadata })
      .thenThrows('Conflict', /version 1 is training; only a trained version can be fine-tuned/);
    spec
      .given([projectCreated])
      .when({ type: 'FinetuneModel', data: { name: 'm', ...newRows }, metadata })
      .thenThrows('NotFound', /Model with name m not found/);
    spec
      .given([projectCreated, ...trainedModel('m')])
      .when({ type: 'FinetuneModel', data: { name: 'm', version: 4, ...newRows }, metadata })
      .thenThrows('NotFound', /Model m has no version 4/);
  });

  it('retrains a fine-tuned version on the same rows when no new ones are given', () =>
    spec
      .given([
        projectCreated,
        ...trainedModel('m'),
        tunedFrom(2, [{ sourceDatabase: 'files', query: 'SELECT * FROM rows' }]),
        modelTrainingStarted('m', 2),
        modelTrained('m', 2),
        modelVersionActivated('m', 2),
      ])
      .when({ type: 'RetrainModel', data: { name: 'm' }, metadata })
      .then([
        {
          type: 'ModelVersionDefined',
          data: {
            ...tunedFrom(3, [{ sourceDatabase: 'files', query: 'SELECT * FROM rows' }]).data,
            finetunedFrom: 1,
          },
        },
      ]));
});
