import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { sharedData } from '../support/data';
import { givenFile, givenProject, givenTrainedModel, uniqueName } from '../support/world';

/**
 * The first rows of home_rentals, as a file of their own: what these tests assert (versions, the
 * rows each version learnt from, the log) holds for any rows, and every version trains on a few
 * hundred in a fraction of the time all 5,037 took (a spec trains some thirty versions).
 */
const RENTAL_ROWS = 600;
const rentalsPrefix = () => {
  const lines = fs.readFileSync(sharedData('home_rentals.csv'), 'utf8').trim().split('\n');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-finetune-'));
  const file = path.join(dir, 'home_rentals.csv');
  fs.writeFileSync(file, `${lines.slice(0, RENTAL_ROWS + 1).join('\n')}\n`);
  return file;
};

type LoggedEvent = { position: number; stream: string; type: string; data: Record<string, unknown> };

/** The columns CREATE MODEL, RETRAIN and FINETUNE answer with (MindsDB's). */
const MODEL_COLUMNS = [
  'NAME',
  'ENGINE',
  'PROJECT',
  'ACTIVE',
  'VERSION',
  'STATUS',
  'ACCURACY',
  'PREDICT',
  'UPDATE_STATUS',
  'MINDSDB_VERSION',
  'ERROR',
  'SELECT_DATA_QUERY',
  'TRAINING_OPTIONS',
  'TAG',
];

describe.each(storeKinds)('FINETUNE and model versions in SQL (event store: %s)', (store) => {
  let t: TestApp;
  let rentals: string;
  /** home_rentals in three disjoint parts: each fine-tuning adds one. */
  let parts: { select: string; rows: number }[];
  const sql = (query: string) => querySql(t, query);
  const cell = (a: SqlAnswer, column: string, row = 0) => a.data![row]![a.column_names!.indexOf(column)];
  const eventsOf = async (stream: string): Promise<LoggedEvent[]> =>
    (await t.http.get(`/api/events?stream=${stream}&limit=1000`).expect(200)).body.events;
  /** The project's events about one version of `rentals`, in log order. */
  const versionEvents = async (project: string, version: number) =>
    (await eventsOf(`project-${project}`)).filter(
      (e) => e.data.name === 'rentals' && e.data.version === version,
    );

  beforeAll(async () => {
    t = await startTestApp(store);
    rentals = (await givenFile(t, rentalsPrefix(), uniqueName('home_rentals'))).name;
    parts = [];
    for (const where of ['number_of_rooms = 0', 'number_of_rooms = 1', 'number_of_rooms >= 2']) {
      const select = `SELECT * FROM ${rentals} WHERE ${where}`;
      const count = await querySql(t, `SELECT count(*) FROM files.${rentals} WHERE ${where}`);
      parts.push({ select, rows: Number(count.data![0]![0]) });
    }
    // Three parts, each of rows of its own
    expect(parts.every((p) => p.rows > 0)).toBe(true);
    expect(parts.reduce((sum, p) => sum + p.rows, 0)).toBe(RENTAL_ROWS);
  }, 60_000);
  afterAll(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
  });

  /** `rentals` trained to completion on the first part, in a project of its own. */
  const givenRentals = async () => {
    const { name: project } = await givenProject(t);
    await givenTrainedModel(t, {
      project,
      name: 'rentals',
      from: 'files',
      select: parts[0]!.select,
      predict: 'rental_price',
    });
    return project;
  };
  const finetune = (project: string, select: string, using = 'join_learn_process = true') =>
    sql(`FINETUNE ${project}.rentals FROM files (${select}) USING ${using}`);

  it('given a trained model, when fine-tuned with new rows, then a new active version learnt from the old rows and the new', async () => {
    const project = await givenRentals();
    const a = await finetune(project, parts[1]!.select);
    expect(a.column_names).toEqual(MODEL_COLUMNS);
    expect(a.data![0]!.slice(0, 6)).toEqual(['rentals', 'lightwood', project, true, 2, 'complete']);
    expect(cell(a, 'PREDICT')).toBe('rental_price');
    expect(cell(a, 'SELECT_DATA_QUERY')).toBe(parts[1]!.select);
    expect(
      (await sql(`SELECT VERSION, ACTIVE, STATUS FROM ${project}.models_versions WHERE NAME = 'rentals'`))
        .data,
    ).toEqual([
      [1, false, 'complete'],
      [2, true, 'complete'],
    ]);
    // The log: as a RETRAIN's, the definition naming what it was fine-tuned from and that version's rows
    const events = await versionEvents(project, 2);
    expect(events.map((e) => e.type)).toEqual([
      'ModelVersionDefined',
      'ModelTrainingStarted',
      'ModelTrained',
      'ModelVersionActivated',
    ]);
    expect(events[0]!.data).toMatchObject({
      target: 'rental_price',
      finetunedFrom: 1,
      priorData: [{ sourceDatabase: 'files', query: parts[0]!.select }],
      sourceDatabase: 'files',
      query: parts[1]!.select,
    });
    expect(events[2]!.data.rows).toBe(parts[0]!.rows + parts[1]!.rows);
    // Its progress on the version's own training stream, counting both parts' rows
    const progress = await eventsOf(`model-training-${events[0]!.position}`);
    expect(progress.length).toBeGreaterThan(0);
    expect(new Set(progress.map((e) => e.type))).toEqual(new Set(['ModelTrainingProgressed']));
    expect(progress.at(-1)!.data).toMatchObject({
      version: 2,
      percent: 100,
      rows: parts[0]!.rows + parts[1]!.rows,
    });
  });

  it('given a fine-tuned model, when fine-tuned again, then the newest version learnt from all three parts', async () => {
    const project = await givenRentals();
    await finetune(project, parts[1]!.select);
    const a = await finetune(project, parts[2]!.select);
    expect(cell(a, 'VERSION')).toBe(3);
    const [defined, , trained] = await versionEvents(project, 3);
    expect(defined!.data).toMatchObject({
      finetunedFrom: 2,
      priorData: [
        { sourceDatabase: 'files', query: parts[0]!.select },
        { sourceDatabase: 'files', query: parts[1]!.select },
      ],
    });
    expect(trained!.data.rows).toBe(parts[0]!.rows + parts[1]!.rows + parts[2]!.rows);
  });

  it('given a fine-tuned model, when retrained without FROM, then it keeps the prior rows; with FROM, only the new ones', async () => {
    const project = await givenRentals();
    await finetune(project, parts[1]!.select);
    expect(cell(await sql(`RETRAIN ${project}.rentals USING join_learn_process = true`), 'VERSION')).toBe(3);
    const [same, , sameTrained] = await versionEvents(project, 3);
    expect(same!.data).toMatchObject({ finetunedFrom: 1, query: parts[1]!.select });
    expect(sameTrained!.data.rows).toBe(parts[0]!.rows + parts[1]!.rows);
    await sql(`RETRAIN ${project}.rentals FROM files (${parts[2]!.select}) USING join_learn_process = true`);
    const [replaced, , replacedTrained] = await versionEvents(project, 4);
    expect(replaced!.data).not.toHaveProperty('priorData');
    expect(replaced!.data).not.toHaveProperty('finetunedFrom');
    expect(replacedTrained!.data.rows).toBe(parts[2]!.rows);
  });

  it('given two versions, when version 1 is fine-tuned with active = false, then the new version is trained and not activated', async () => {
    const project = await givenRentals();
    await finetune(project, parts[1]!.select);
    const a = await sql(
      `FINETUNE MODEL ${project}.rentals.1 FROM files (${parts[2]!.select}) USING join_learn_process = true, active = false`,
    );
    expect(a.data![0]!.slice(3, 6)).toEqual([false, 3, 'complete']);
    const events = await versionEvents(project, 3);
    expect(events.map((e) => e.type)).toEqual([
      'ModelVersionDefined',
      'ModelTrainingStarted',
      'ModelTrained',
    ]);
    expect(events[0]!.data).toMatchObject({
      finetunedFrom: 1,
      priorData: [{ sourceDatabase: 'files', query: parts[0]!.select }],
    });
    expect(
      (
        await sql(
          `SELECT VERSION FROM information_schema.MODELS_VERSIONS WHERE PROJECT = '${project}' AND ACTIVE`,
        )
      ).data,
    ).toEqual([[2]]);
  });

  it('refuses to fine-tune an unknown model, from an unknown database, or a version that did not train: nothing is recorded', async () => {
    const project = await givenRentals();
    const before = (await eventsOf(`project-${project}`)).length;
    expect(await sql(`FINETUNE ${project}.nope FROM files (${parts[1]!.select})`)).toMatchObject({
      type: 'error',
      error_message: 'Model with name nope not found',
    });
    expect(
      cell(
        await sql(`RETRAIN ${project}.rentals FROM files (SELECT 1 AS a) USING join_learn_process = true`),
        'STATUS',
      ),
    ).toBe('error');
    expect(await sql(`FINETUNE ${project}.rentals FROM nowhere (SELECT 1)`)).toMatchObject({
      type: 'error',
      error_message: 'Database nowhere does not exist',
    });
    // Version 2 was retrained on rows without the target: it failed, and cannot be fine-tuned
    expect(cell(await sql(`SELECT STATUS FROM ${project}.models_versions WHERE VERSION = 2`), 'STATUS')).toBe(
      'error',
    );
    expect(await sql(`FINETUNE ${project}.rentals.2 FROM files (${parts[1]!.select})`)).toMatchObject({
      type: 'error',
      error_message: expect.stringMatching(/version 2 is error; only a trained version can be fine-tuned/),
    });
    const after = await eventsOf(`project-${project}`);
    expect(after.slice(before).filter((e) => e.data.version === 3)).toEqual([]);
  });

  /**
   * Fine-tuning takes seconds, so the tests that only read a fine-tuned model share one: trained on
   * the first part and fine-tuned with the second, in a project of its own, which none of them changes.
   */
  describe('a fine-tuned model', () => {
    let project: string;
    beforeAll(async () => {
      project = await givenRentals();
      expect(cell(await finetune(project, parts[1]!.select), 'STATUS')).toBe('complete');
    });

    it('shows every version in models_versions with MindsDB’s columns, as the JS SDK reads it', async () => {
      const a = await sql(
        `SELECT * FROM \`${project}\`.models_versions WHERE name = 'rentals' and version = 1`,
      );
      expect(a.column_names).toEqual([...MODEL_COLUMNS, 'CREATED_AT', 'TRAINING_TIME']);
      expect(a.data!.map((r) => r.slice(0, 8))).toEqual([
        ['rentals', 'lightwood', project, false, 1, 'complete', cell(a, 'ACCURACY'), 'rental_price'],
      ]);
      expect((await sql('SHOW TABLES FROM ' + project)).data!.flat()).toContain('models_versions');
    });

    it('describes a version named as the JS SDK quotes it, and refuses a per-series description', async () => {
      const v1 = await sql(`DESCRIBE \`${project}\`.\`rentals\`.\`1\`.\`features\``);
      expect(v1.column_names).toEqual(['column', 'type', 'encoder', 'role', 'importance']);
      const info = await sql(`DESCRIBE \`${project}\`.\`rentals\`.\`2\`.\`info\``);
      expect(cell(info, 'training_rows')).toBe(parts[0]!.rows + parts[1]!.rows);
      expect(await sql(`DESCRIBE \`${project}\`.\`rentals\`.\`2\`.\`info\`.\`store_1\``)).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/per-series/),
      });
    });
  });
});
