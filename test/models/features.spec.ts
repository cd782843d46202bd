import { querySql, startTestApp, type SqlAnswer, type TestApp } from '../support/app';
import { givenSharedFile } from '../support/modelsData';
import { eventsOf, givenProject } from '../support/world';

/** home_rentals without initial_price (which nearly equals the target): the size of the home matters. */
const SELECT = (file: string) =>
  `SELECT number_of_rooms, number_of_bathrooms, sqft, location, days_on_market, neighborhood, rental_price FROM ${file}`;

describe('feature importance in DESCRIBE, and byte-identical artifacts', () => {
  let t: TestApp;
  let rentals: string;
  let project: string;
  const sql = (query: string, db?: string) => querySql(t, query, db ? { context: { db } } : {});
  const cell = (a: SqlAnswer, column: string, row = 0) => a.data![row]![a.column_names!.indexOf(column)];
  const digestOf = async (p: string) =>
    (await eventsOf(t, `project-${p}`))
      .filter((e) => e.type === 'ModelTrained')
      .map((e) => e.data.artifactDigest);

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    rentals = await givenSharedFile(t, 'home_rentals.csv');
    project = (await givenProject(t)).name;
    const created = await sql(
      `CREATE MODEL ${project}.rentals FROM files (${SELECT(rentals)}) PREDICT rental_price USING join_learn_process = true`,
    );
    expect(cell(created, 'STATUS')).toBe('complete');
  }, 60_000);
  afterAll(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
  });

  it('answers DESCRIBE p.m.features with one row per column: type, encoder, role, importance', async () => {
    const a = await sql(`DESCRIBE ${project}.rentals.features`);
    expect(a.column_names).toEqual(['column', 'type', 'encoder', 'role', 'importance']);
    const byColumn = Object.fromEntries(a.data!.map((r) => [r[0], r]));
    expect(Object.keys(byColumn)).toEqual([
      'number_of_rooms',
      'number_of_bathrooms',
      'sqft',
      'location',
      'days_on_market',
      'neighborhood',
      'rental_price',
    ]);
    expect(byColumn.sqft!.slice(0, 4)).toEqual(['sqft', 'integer', 'NumericEncoder', 'feature']);
    expect(byColumn.location!.slice(1, 4)).toEqual([
      'categorical',
      expect.stringMatching(/Encoder$/),
      'feature',
    ]);
    expect(byColumn.rental_price).toEqual(['rental_price', 'float', 'NumericEncoder', 'target', null]);
    // Importances are relative to the most important column (1), a measure of the home's size
    const importances = a.data!.filter((r) => r[3] === 'feature').map((r) => [r[0], r[4] as number] as const);
    for (const [, value] of importances) expect(value).toBeGreaterThanOrEqual(0);
    const ranked = [...importances].sort((x, y) => y[1] - x[1]);
    expect(ranked[0]![1]).toBe(1);
    expect(['number_of_rooms', 'sqft']).toContain(ranked[0]![0]);
    expect(ranked.at(-1)![1]).toBeLessThan(0.1);
  });

  it('answers the same through the current project, a version, and REST (the SDKs’ describe)', async () => {
    const direct = (await sql(`DESCRIBE ${project}.rentals.features`)).data;
    expect((await sql('DESCRIBE rentals.features', project)).data).toEqual(direct);
    expect((await sql(`DESCRIBE MODEL ${project}.rentals.1.features`)).data).toEqual(direct);
    const rest = await t.http
      .get(`/api/projects/${project}/models/rentals/describe?attribute=features`)
      .expect(200);
    expect(rest.body.map((r: Record<string, unknown>) => Object.values(r))).toEqual(direct);
  });

  it('lists column importances in DESCRIBE p.m (info), as MindsDB', async () => {
    const info = await sql(`DESCRIBE ${project}.rentals`);
    expect(info.column_names!.slice(0, 4)).toEqual(['accuracies', 'column_importances', 'outputs', 'inputs']);
    const importances = cell(info, 'column_importances') as Record<string, number>;
    const features = (await sql(`DESCRIBE ${project}.rentals.features`)).data!;
    expect(importances).toEqual(
      Object.fromEntries(features.filter((r) => r[3] === 'feature').map((r) => [r[0], r[4]])),
    );
    expect(Math.max(...Object.values(importances))).toBe(1);
    expect(cell(info, 'outputs')).toEqual(['rental_price']);
  });

  it('refuses an attribute it does not have, naming the ones it has', async () => {
    const a = await t.http
      .get(`/api/projects/${project}/models/rentals/describe?attribute=jsonai`)
      .expect(400);
    expect(a.body.detail).toMatch(/Unknown attribute jsonai: use info, features, model, progress/);
  });

  it('trains the same rows with the same seed into byte-identical artifacts; another seed differs', async () => {
    const again = (await givenProject(t)).name;
    const other = (await givenProject(t)).name;
    const create = (p: string, using = '') =>
      sql(
        `CREATE MODEL ${p}.rentals FROM files (${SELECT(rentals)}) PREDICT rental_price USING join_learn_process = true${using}`,
      );
    expect(cell(await create(again), 'STATUS')).toBe('complete');
    expect(cell(await create(other, ', seed = 7'), 'STATUS')).toBe('complete');
    const [first] = await digestOf(project);
    expect(await digestOf(again)).toEqual([first]);
    expect(await digestOf(other)).not.toEqual([first]);
  });
});
