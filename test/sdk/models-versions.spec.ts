import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenSalesFile, givenSharedFile } from '../support/modelsData';
import { connectSdk, type Sdk } from '../support/sdk';
import { eventsOf, givenProject } from '../support/world';

/** The rows each step learns from: a first part of home_rentals, then the rest (fine-tuning). */
const FIRST = (file: string) => `SELECT * FROM ${file} WHERE number_of_rooms < 2`;
const REST = (file: string) => `SELECT * FROM ${file} WHERE number_of_rooms >= 2`;

// The official mindsdb-js-sdk, unchanged, against the service: Models and their versions.
describe.each(storeKinds)('mindsdb-js-sdk Models and versions on %s', (store) => {
  let t: TestApp;
  let sdk: Sdk;
  let close: () => Promise<void>;
  let rentals: string;
  const rowCount = async (select: string) => {
    const answer = await querySql(t, `SELECT count(*) AS n FROM (${select}) AS r`, {
      context: { db: 'files' },
    });
    expect(answer.type).toBe('table');
    return Number(answer.data![0]![0]);
  };

  beforeAll(async () => {
    t = await startTestApp(store);
    ({ sdk, close } = await connectSdk(t));
    rentals = await givenSharedFile(t, 'home_rentals.csv');
  });
  afterAll(async () => {
    await close();
    await t.running.services.models.idle();
    await t.dispose();
  });

  /** A model trained through the SDK (waiting for its training), in a project of its own. */
  const givenSdkModel = async () => {
    const { name: project } = await givenProject(t);
    await sdk.Models.trainModel('rentals', 'rental_price', project, {
      integration: 'files',
      select: FIRST(rentals),
      using: { join_learn_process: true },
    });
    return project;
  };

  it('trains a model and gets it back by name, in the shape of Model.fromModelRow', async () => {
    const project = await givenSdkModel();
    const model = await sdk.Models.getModel('rentals', project);
    expect(model).toMatchObject({
      name: 'rentals',
      project,
      targetColumn: 'rental_price',
      status: 'complete',
      updateStatus: 'up_to_date',
      version: 1,
      active: true,
    });
    // The SDK reads numbers of more than 15 digits as strings (json-bigint), MindsDB's accuracies too.
    expect(Number(model!.accuracy)).toBeGreaterThan(0.9);
    expect(await sdk.Models.getModel('no_such_model', project)).toBeUndefined();
  });

  it('describes a version: its features (column, type, encoder, role) and an attribute', async () => {
    const project = await givenSdkModel();
    const model = (await sdk.Models.getModel('rentals', project))!;
    const features = await model.describe();
    expect(features.map((f) => f.column)).toEqual([
      'number_of_rooms',
      'number_of_bathrooms',
      'sqft',
      'location',
      'days_on_market',
      'initial_price',
      'neighborhood',
      'rental_price',
    ]);
    expect(features).toContainEqual(
      expect.objectContaining({
        column: 'sqft',
        type: 'integer',
        encoder: 'NumericEncoder',
        role: 'feature',
      }),
    );
    expect(features).toContainEqual(expect.objectContaining({ column: 'rental_price', role: 'target' }));
    const [info] = await model.describeAttribute('info');
    expect(info).toMatchObject({ outputs: ['rental_price'], status: 'complete' });
    const [trained] = await model.describeAttribute('model');
    expect(trained).toMatchObject({ accuracy: model.accuracy, selected: true });
  });

  it('retrains into version 2 and gets each version by number (models_versions)', async () => {
    const project = await givenSdkModel();
    const model = (await sdk.Models.getModel('rentals', project))!;
    const retrained = await model.retrain({
      integration: 'files',
      select: `SELECT * FROM ${rentals}`,
      using: { join_learn_process: true },
    });
    expect(retrained).toMatchObject({ name: 'rentals', version: 2, status: 'complete', active: true });
    expect(await sdk.Models.getModel('rentals', project, 1)).toMatchObject({ version: 1, active: false });
    expect(await sdk.Models.getModel('rentals', project, 2)).toMatchObject({ version: 2, active: true });
    expect(await sdk.Models.getModel('rentals', project, 7)).toBeUndefined();
    // A version's own description: version 2 learnt from every row.
    const v2 = (await sdk.Models.getModel('rentals', project, 2))!;
    const [info] = await v2.describeAttribute('info');
    expect(info!.training_rows).toBe(await rowCount(`SELECT * FROM ${rentals}`));
  });

  it('retrains with no options, on the same rows, into the next version', async () => {
    const project = await givenSdkModel();
    const model = (await sdk.Models.getModel('rentals', project))!;
    const retrained = await model.retrain();
    expect(retrained).toMatchObject({ name: 'rentals', version: 2 });
    await t.running.services.models.idle();
    expect(await sdk.Models.getModel('rentals', project, 2)).toMatchObject({ status: 'complete' });
  });

  it('fine-tunes into a new version that learnt from the old rows and the new ones', async () => {
    const project = await givenSdkModel();
    const model = (await sdk.Models.getModel('rentals', project))!;
    const tuned = await model.finetune('files', {
      integration: 'files',
      select: REST(rentals),
      using: { join_learn_process: true },
    });
    expect(tuned).toMatchObject({
      name: 'rentals',
      project,
      targetColumn: 'rental_price',
      version: 2,
      status: 'complete',
      active: true,
    });
    const [info] = await tuned.describeAttribute('info');
    expect(info!.training_rows).toBe((await rowCount(FIRST(rentals))) + (await rowCount(REST(rentals))));
    const all = await sdk.Models.getAllModels(project);
    expect(all.map((m) => [m.name, m.version, m.active, m.status])).toEqual([
      ['rentals', 1, false, 'complete'],
      ['rentals', 2, true, 'complete'],
    ]);
    // The log: version 2 is defined from version 1, keeping its rows, then trained and activated.
    const events = (await eventsOf(t, `project-${project}`)).filter((e) => e.data.version === 2);
    expect(events.map((e) => e.type)).toEqual([
      'ModelVersionDefined',
      'ModelTrainingStarted',
      'ModelTrained',
      'ModelVersionActivated',
    ]);
    expect(events[0]!.data).toMatchObject({
      finetunedFrom: 1,
      priorData: [{ sourceDatabase: 'files', query: FIRST(rentals) }],
      sourceDatabase: 'files',
      query: REST(rentals),
    });
  });

  it('trains and retrains a forecaster with the SDK’s clauses (GROUP BY written before ORDER BY)', async () => {
    const { name: project } = await givenProject(t);
    const sales = await givenSalesFile(t, 120);
    const series = { groupBy: 'store', orderBy: 'day', window: 14, horizon: 7 };
    await sdk.Models.trainModel('forecast', 'sales', project, {
      integration: 'files',
      select: `SELECT * FROM ${sales.name}`,
      ...series,
      using: { join_learn_process: true },
    });
    const model = (await sdk.Models.getModel('forecast', project))!;
    expect(model).toMatchObject({ version: 1, status: 'complete', targetColumn: 'sales' });
    const retrained = await model.retrain({
      integration: 'files',
      select: `SELECT * FROM ${sales.name}`,
      ...series,
      using: { join_learn_process: true },
    });
    expect(retrained).toMatchObject({ version: 2, status: 'complete', active: true });
    const [defined] = (await eventsOf(t, `project-${project}`)).filter(
      (e) => e.type === 'ModelVersionDefined' && e.data.version === 2,
    );
    expect(defined!.data.timeseries).toEqual({ orderBy: 'day', groupBy: ['store'], window: 14, horizon: 7 });
  });

  it('answers a fine-tuning of an unknown model with the SDK’s error', async () => {
    const { name: project } = await givenProject(t);
    await expect(
      sdk.Models.finetuneModel('nope', project, { integration: 'files', select: FIRST(rentals) }),
    ).rejects.toThrow(/nope not found/);
  });
});
