import { readSharedCsv, sharedData } from '../support/data';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshPostgresData } from '../support/external';
import { connectSdk, type Sdk } from '../support/sdk';
import { eventsOf, givenDatabase, givenFile, givenProject, uniqueName } from '../support/world';

// The official mindsdb-js-sdk, unchanged, against the service: training a model, finding it, and
// predicting one row (model.query) and batches joined with a file or a PostgreSQL table
// (model.batchQuery), which the SDK writes as `JOIN `p`.`m`.<version> AS m` without ON. The SDK
// parses answers with json-bigint (storeAsString): numbers of more than 15 digits reach it as text,
// as they do from MindsDB.
describe.each(storeKinds)('mindsdb-js-sdk Models: train and predict on %s', (store) => {
  let t: TestApp;
  let sdk: Sdk;
  let close: () => Promise<void>;
  let project: string;
  let file: string;
  let pg: Awaited<ReturnType<typeof freshPostgresData>>;
  let pgName: string;
  /** What REST predicts for these rows (the reference the SDK's answers are checked against). */
  const restPredict = async (rows: Record<string, unknown>[]) =>
    (await t.http.post(`/api/projects/${project}/models/rentals/predict`).send({ data: rows }).expect(200))
      .body as { rental_price: number }[];

  /** A prediction's row (the SDK types it as a bare object). */
  const dataOf = (p: { data: object }) => p.data as Record<string, unknown>;

  beforeAll(async () => {
    t = await startTestApp(store);
    ({ sdk, close } = await connectSdk(t));
    ({ name: project } = await givenProject(t));
    file = (await givenFile(t, sharedData('home_rentals.csv'), uniqueName('rentals'))).name;
    const rows = (await readSharedCsv('home_rentals.csv')).filter((r) => /^\d+$/.test(r.sqft!)).slice(0, 500);
    pg = await freshPostgresData([
      'CREATE TABLE rentals (sqft int, location text, number_of_rooms int, rental_price double precision)',
      `INSERT INTO rentals VALUES ${rows.map((r) => `(${r.sqft}, '${r.location}', ${r.number_of_rooms}, ${r.rental_price})`).join(', ')}`,
    ]);
    pgName = (await givenDatabase(t, { name: uniqueName('pg'), parameters: pg.parameters })).name;
    const trained = await sdk.Models.trainModel('rentals', 'rental_price', project, {
      integration: 'files',
      select: `SELECT * FROM ${file}`,
      using: { join_learn_process: true },
    });
    expect(trained.name).toBe('rentals');
  });
  afterAll(async () => {
    await close?.();
    await t?.running.services.models.idle();
    await t?.dispose();
    await pg?.drop();
  });

  it('trains through Models.trainModel: the log records the model defined and trained in its project', async () => {
    const types = (await eventsOf(t, `project-${project}`)).map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining([
        'ModelVersionDefined',
        'ModelTrainingStarted',
        'ModelTrained',
        'ModelVersionActivated',
      ]),
    );
  });

  it('finds the trained model through Models.getModel, complete, at version 1', async () => {
    const model = await sdk.Models.getModel('rentals', project);
    expect(model).toMatchObject({
      name: 'rentals',
      project,
      targetColumn: 'rental_price',
      status: 'complete',
      version: 1,
    });
  });

  it('predicts one row with model.query, as REST does', async () => {
    const model = (await sdk.Models.getModel('rentals', project))!;
    const prediction = await model.query({
      where: ['sqft = 823', "location = 'good'", 'number_of_rooms = 1'],
    });
    const [rest] = await restPredict([{ sqft: 823, location: 'good', number_of_rooms: 1 }]);
    expect(Number(prediction.value)).toBeCloseTo(rest!.rental_price, 6);
    expect(JSON.parse(String(prediction.explain))).toMatchObject({ confidence: expect.any(Number) });
    expect(prediction.data).toMatchObject({ sqft: 823, location: 'good' });
  });

  it('predicts a batch over an uploaded file with model.batchQuery, one prediction per row', async () => {
    const model = (await sdk.Models.getModel('rentals', project))!;
    const predictions = await model.batchQuery({ join: `files.${file}`, limit: 5 });
    expect(predictions).toHaveLength(5);
    // The file's first rows, every column (the model reads them all), in the order the join pairs them.
    const inputs = (await sdk.SQL.runQuery(`SELECT * FROM files.${file} LIMIT 5`)).rows;
    expect(predictions.map((p) => dataOf(p).sqft)).toEqual(inputs.map((r) => r.sqft));
    const rest = await restPredict(inputs);
    predictions.forEach((p, i) => expect(Number(p.value)).toBeCloseTo(rest[i]!.rental_price, 6));
  });

  it('predicts a batch over a PostgreSQL table with model.batchQuery, its WHERE applied', async () => {
    const model = (await sdk.Models.getModel('rentals', project))!;
    const predictions = await model.batchQuery({
      join: `${pgName}.rentals`,
      where: ['t.sqft > 800', "t.location = 'great'"],
      limit: 10,
    });
    expect(predictions).toHaveLength(10);
    const rows = predictions.map(dataOf);
    expect(rows.every((r) => (r.sqft as number) > 800 && r.location === 'great')).toBe(true);
    const rest = await restPredict(
      rows.map((r) => ({ sqft: r.sqft, location: r.location, number_of_rooms: r.number_of_rooms })),
    );
    predictions.forEach((p, i) => expect(Number(p.value)).toBeCloseTo(rest[i]!.rental_price, 6));
  });

  it('hands back the error of a batch over a table that does not exist', async () => {
    const model = (await sdk.Models.getModel('rentals', project))!;
    await expect(model.batchQuery({ join: `${pgName}.no_such_table`, limit: 5 })).rejects.toThrow(
      /no_such_table/,
    );
  });
});
