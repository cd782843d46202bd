import { problemOf, querySql, startTestApp, type SqlAnswer, type TestApp } from '../support/app';
import { givenSharedFile } from '../support/modelsData';
import { eventsOf, givenProject } from '../support/world';

/**
 * openml_phoneme: five numeric features and a `Class` of 1 or 2. Lightwood reads two integers as
 * classes; so do we, unless `USING target_type = 'numeric'` asks for a number.
 */
describe('the target’s type: inferred, or asked for with USING target_type', () => {
  let t: TestApp;
  let phoneme: string;
  const sql = (query: string) => querySql(t, query);
  const cell = (a: SqlAnswer, column: string, row = 0) => a.data![row]![a.column_names!.indexOf(column)];
  const create = async (project: string, name: string, using = '') =>
    sql(
      `CREATE MODEL ${project}.${name} FROM files (SELECT * FROM ${phoneme}) PREDICT Class USING join_learn_process = true${using}`,
    );
  const trainedEvent = async (project: string) =>
    (await eventsOf(t, `project-${project}`)).find((e) => e.type === 'ModelTrained')!.data;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    phoneme = await givenSharedFile(t, 'openml_phoneme.csv');
  });
  afterAll(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
  });

  it('infers classes from an integer target with two values: probabilities, balanced accuracy', async () => {
    const { name: project } = await givenProject(t);
    // When a model learns Class without saying its type
    const created = await create(project, 'phoneme');
    expect(cell(created, 'STATUS')).toBe('complete');
    // Then it was learnt as classes, recorded in the log as inferred
    expect(await trainedEvent(project)).toMatchObject({
      task: 'classification',
      targetType: 'categorical',
      targetTypeSource: 'inferred',
      targetDtype: 'binary',
      metric: 'balanced_accuracy',
    });
    expect(cell(created, 'ACCURACY')).toBeGreaterThan(0.8);
    // And DESCRIBE and GET say so
    const info = await sql(`DESCRIBE ${project}.phoneme`);
    expect(cell(info, 'target_type')).toBe('categorical');
    expect(cell(info, 'target_type_source')).toBe('inferred');
    expect(cell(info, 'accuracies')).toEqual({ balanced_accuracy: expect.any(Number) });
    expect((await t.http.get(`/api/projects/${project}/models/phoneme`).expect(200)).body.target_type).toBe(
      'categorical',
    );
    // And a prediction is one of the classes, with a probability per class
    const p = await t.http
      .post(`/api/projects/${project}/models/phoneme/predict`)
      .send([{ V1: 0.49, V2: -0.45, V3: -1.05, V4: -0.6, V5: -0.02 }])
      .expect(200);
    expect([1, 2]).toContain(p.body[0].Class);
    expect(Object.keys(JSON.parse(p.body[0].Class_explain))).toEqual(
      expect.arrayContaining(['probability_class_1', 'probability_class_2']),
    );
  });

  it("learns a number when USING target_type = 'numeric' says so", async () => {
    const { name: project } = await givenProject(t);
    const created = await create(project, 'as_number', ", target_type = 'numeric'");
    expect(cell(created, 'STATUS')).toBe('complete');
    expect(await trainedEvent(project)).toMatchObject({
      task: 'regression',
      targetType: 'numeric',
      targetTypeSource: 'option',
      metric: 'r2',
    });
    expect(JSON.parse(String(cell(created, 'TRAINING_OPTIONS'))).using.target_type).toBe('numeric');
    const p = await t.http
      .post(`/api/projects/${project}/models/as_number/predict`)
      .send([{ V1: 0.49 }])
      .expect(200);
    expect(p.body[0]).toHaveProperty('Class_min');
    expect(cell(await sql(`DESCRIBE ${project}.as_number`), 'target_type_source')).toBe('option');
  });

  it('refuses an unknown target_type in SQL, naming the statement and the option (nothing recorded)', async () => {
    const { name: project } = await givenProject(t);
    const a = await create(project, 'bad', ", target_type = 'ordinal'");
    expect(a.type).toBe('error');
    expect(a.error_message).toMatch(/^CREATE MODEL bad: Invalid USING option target_type/);
    expect((await eventsOf(t, `project-${project}`)).map((e) => e.type)).toEqual(['ProjectCreated']);
  });

  it('answers 400 problem+json for the same over REST', async () => {
    const { name: project } = await givenProject(t);
    const res = await t.http
      .post(`/api/projects/${project}/models`)
      .send({
        query: `CREATE MODEL bad FROM files (SELECT * FROM ${phoneme}) PREDICT Class USING target_type = 3`,
      })
      .expect(400);
    expect(problemOf(res)).toMatchObject({
      title: 'Invalid model definition',
      detail: expect.stringMatching(/CREATE MODEL bad: Invalid USING option target_type/),
    });
  });

  it('refuses it on RETRAIN too, keeping the versions there are', async () => {
    const { name: project } = await givenProject(t);
    expect(cell(await create(project, 'kept'), 'STATUS')).toBe('complete');
    const a = await sql(`RETRAIN ${project}.kept USING target_type = 'words', join_learn_process = true`);
    expect(a.error_message).toMatch(/^RETRAIN kept: Invalid USING option target_type/);
    expect((await sql(`SELECT VERSION FROM ${project}.models`)).data).toEqual([[1]]);
  });
});
