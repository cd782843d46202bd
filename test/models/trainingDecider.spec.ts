import type { ModelTrainingProgressed, ModelVersionDefined } from '../../events';
import {
  decideModel,
  decideTrainingProgress,
  type ModelCommand,
  type ReportTrainingProgress,
} from '../../src/models/decider';
import { trainOptionsOf } from '../../src/models/options';
import { trainingProgressAggregate } from '../../src/models/state';
import { deciderSpec } from '../support/decider';
import {
  at,
  modelVersionActivated,
  modelVersionDefined,
  now,
  projectCreated,
  projectSpec,
} from '../support/project';

const spec = projectSpec<ModelCommand>(decideModel);
const metadata = { now };
const definition = { target: 'y', query: 'SELECT * FROM rows', sourceDatabase: 'files', options: {} };
const weekly = { orderBy: 't', groupBy: ['store'], window: 14, horizon: 7 };

/** A version defined with ORDER BY t GROUP BY store WINDOW 14 HORIZON 7. */
const forecasterDefined = (
  name: string,
  version = 1,
  options: Record<string, unknown> = {},
): ModelVersionDefined => {
  const e = modelVersionDefined(name, version, options);
  return { ...e, data: { ...e.data, timeseries: weekly } };
};

describe('model decider: what the engine is asked to learn', () => {
  it('records the time-series clauses with the definition', () =>
    spec
      .given([projectCreated])
      .when({
        type: 'DefineModel',
        data: { name: 'm', replace: false, ...definition, timeseries: weekly },
        metadata,
      })
      .then([forecasterDefined('m')]));

  it('keeps a forecaster one when retrained', () =>
    spec
      .given([projectCreated, forecasterDefined('m'), modelVersionActivated('m', 1)])
      .when({ type: 'RetrainModel', data: { name: 'm' }, metadata })
      .then([forecasterDefined('m', 2)]));

  it.each([
    [{ target_type: 'ordinal' }, null, /^CREATE MODEL m: Invalid USING option target_type/],
    [{ seed: -1 }, null, /^CREATE MODEL m: Invalid USING option seed/],
    [{ max_rounds: 0 }, null, /^CREATE MODEL m: Invalid USING option max_rounds/],
    [{}, { ...weekly, window: 0 }, /^CREATE MODEL m: Invalid WINDOW/],
    [{}, { ...weekly, groupBy: ['Y'] }, /The target y cannot also order or group the rows/],
    [{ target_type: 'categorical' }, weekly, /Time-series models forecast numbers/],
  ])('refuses %j with %j before anything is recorded (400)', (options, timeseries, message) =>
    spec
      .given([projectCreated])
      .when({
        type: 'DefineModel',
        data: { name: 'm', replace: false, ...definition, options, timeseries },
        metadata,
      })
      .thenThrows('Invalid', message),
  );

  it('checks the merged options of a retrain', () =>
    spec
      .given([projectCreated, modelVersionDefined('m', 1, { target_type: 'numeric' })])
      .when({ type: 'RetrainModel', data: { name: 'm', options: { target_type: 'words' } }, metadata })
      .thenThrows('Invalid', /^RETRAIN m: Invalid USING option target_type/));
});

describe('the engine options of a version', () => {
  it('takes the USING options the engine knows (SQL spellings), the clauses, and nothing else', () =>
    expect(
      trainOptionsOf(
        {
          seed: 3,
          target_type: 'numeric',
          maxrounds: 50,
          class_balance: 'none',
          engine: 'lightwood',
          tag: 'x',
        },
        weekly,
      ),
    ).toEqual({
      seed: 3,
      target_type: 'numeric',
      maxRounds: 50,
      classBalance: 'none',
      orderBy: 't',
      groupBy: ['store'],
      window: 14,
      horizon: 7,
    }));
});

describe('training progress (the training’s own stream)', () => {
  const progressSpec = deciderSpec({ ...trainingProgressAggregate, decide: decideTrainingProgress });
  const base = { projectId: 1, project: 'proj', name: 'm', version: 1, versionId: 2, rows: 500 };
  const report = (
    phase: ReportTrainingProgress['data']['phase'],
    percent: number,
  ): ReportTrainingProgress => ({
    type: 'ReportTrainingProgress',
    data: { ...base, phase, percent },
    metadata,
  });
  const progressed = (
    phase: ModelTrainingProgressed['data']['phase'],
    percent: number,
  ): ModelTrainingProgressed => ({
    type: 'ModelTrainingProgressed',
    data: { ...base, phase, percent, progressedAt: at },
  });

  it('records the first report', () =>
    progressSpec
      .given([])
      .when(report('reading', 0))
      .then([progressed('reading', 0)]));

  it('records the next phase at the same percentage', () =>
    progressSpec
      .given([progressed('encoding', 15)])
      .when(report('training', 15))
      .then([progressed('training', 15)]));

  it('records nothing for a repeated or older report', () => {
    progressSpec
      .given([progressed('training', 40)])
      .when(report('training', 40))
      .then([]);
    progressSpec
      .given([progressed('training', 40)])
      .when(report('training', 30))
      .then([]);
    progressSpec
      .given([progressed('calibrating', 92)])
      .when(report('training', 95))
      .then([]);
  });
});
