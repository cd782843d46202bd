import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { givenSharedFile } from '../support/modelsData';
import { givenProject } from '../support/world';

type LoggedEvent = { position: number; stream: string; type: string; data: Record<string, unknown> };

describe.each(storeKinds)('progress while training (event store: %s)', (store) => {
  let t: TestApp;
  let project: string;
  /** The events of training `rentals` once, from its definition on, in log order. */
  let events: LoggedEvent[];
  const sql = (query: string) => querySql(t, query);
  const cell = (a: SqlAnswer, column: string, row = 0) => a.data![row]![a.column_names!.indexOf(column)];

  beforeAll(async () => {
    t = await startTestApp(store);
    const rentals = await givenSharedFile(t, 'home_rentals.csv');
    project = (await givenProject(t)).name;
    const created = await sql(
      `CREATE MODEL ${project}.rentals FROM files (SELECT * FROM ${rentals}) PREDICT rental_price USING join_learn_process = true`,
    );
    expect(cell(created, 'STATUS')).toBe('complete');
    const all: LoggedEvent[] = [];
    for (let after = 0; ;) {
      const page = (await t.http.get(`/api/events?after=${after}&limit=1000`).expect(200)).body;
      all.push(...page.events);
      if (page.events.length < 1000) break;
      after = page.next_after;
    }
    const defined = all.findIndex((e) => e.type === 'ModelVersionDefined' && e.data.project === project);
    events = all.slice(defined);
  }, 120_000);
  afterAll(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
  });

  it('records coarse progress as events on the training’s own stream, never the project’s', () => {
    const defined = events[0]!;
    const progress = events.filter((e) => e.type === 'ModelTrainingProgressed');
    // About twenty reports at most (never one per tree), at least one per phase
    expect(progress.length).toBeGreaterThanOrEqual(4);
    expect(progress.length).toBeLessThanOrEqual(20);
    expect(new Set(progress.map((e) => e.stream))).toEqual(new Set([`model-training-${defined.position}`]));
    expect([...new Set(progress.map((e) => e.data.phase))]).toEqual([
      'reading',
      'encoding',
      'training',
      'calibrating',
    ]);
    const percents = progress.map((e) => e.data.percent as number);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(percents.at(-1)).toBe(100);
    // Each names the version and the rows the query returned
    expect(progress[0]!.data).toMatchObject({
      project,
      name: 'rentals',
      version: 1,
      versionId: defined.position,
      rows: 5037,
    });
    // And all of them come before the outcome
    const trained = events.findIndex((e) => e.type === 'ModelTrained');
    const lastReport = events.map((e) => e.type).lastIndexOf('ModelTrainingProgressed');
    expect(lastReport).toBeLessThan(trained);
  });

  it('records what was learnt with the outcome: task, target type, rows, column importances', () => {
    const trained = events.find((e) => e.type === 'ModelTrained')!;
    expect(trained.data).toMatchObject({
      task: 'regression',
      targetType: 'numeric',
      targetTypeSource: 'inferred',
      targetDtype: 'float',
      rows: 5037,
      metric: 'r2',
    });
    expect(trained.data.columns).toContainEqual({
      name: 'sqft',
      dtype: 'integer',
      encoder: 'NumericEncoder',
      role: 'feature',
      importance: expect.any(Number),
    });
  });

  it('shows the finished training in the models table: last phase of five, 100%, training time', async () => {
    const a = await sql(
      `SELECT STATUS, CURRENT_TRAINING_PHASE, TOTAL_TRAINING_PHASES, TRAINING_PHASE_NAME, PROGRESS, TRAINING_TIME FROM ${project}.models WHERE NAME = 'rentals'`,
    );
    expect(a.data![0]!.slice(0, 5)).toEqual(['complete', 5, 5, 'Complete', 100]);
    expect(a.data![0]![5]).toBeGreaterThan(0);
    const listed = await sql(`SELECT PROGRESS FROM information_schema.MODELS WHERE PROJECT = '${project}'`);
    expect(listed.data).toEqual([[100]]);
  });

  it('shows phase, percentage and rows in GET …/models/{m}', async () => {
    const model = (await t.http.get(`/api/projects/${project}/models/rentals`).expect(200)).body;
    expect(model).toMatchObject({
      status: 'complete',
      training_phase_current: 5,
      training_phase_total: 5,
      training_phase_name: 'Complete',
      progress: 100,
      training_rows: 5037,
      target_type: 'numeric',
    });
    expect(model.training_time).toBeGreaterThan(0);
  });

  it('answers DESCRIBE … .progress as MindsDB (current, total, name) and DESCRIBE with time and rows', async () => {
    const progress = await sql(`DESCRIBE ${project}.rentals.progress`);
    expect(progress.column_names).toEqual(['current', 'total', 'name', 'percent', 'rows', 'status']);
    expect(progress.data).toEqual([[5, 5, 'Complete', 100, 5037, 'complete']]);
    const info = await sql(`DESCRIBE ${project}.rentals`);
    expect(cell(info, 'training_rows')).toBe(5037);
    expect(cell(info, 'training_time')).toBeGreaterThan(0);
  });

  it('projects the same rows when the read model is rebuilt from the log', async () => {
    const read = () =>
      sql(
        `SELECT NAME, STATUS, CURRENT_TRAINING_PHASE, TRAINING_PHASE_NAME, PROGRESS, TRAINING_TIME, TRAINING_OPTIONS FROM ${project}.models`,
      );
    const live = (await read()).data;
    await t.running.ctx.projections.rebuild();
    expect((await read()).data).toEqual(live);
  });
});
