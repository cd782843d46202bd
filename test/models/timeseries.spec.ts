import { problemOf, querySql, startTestApp, type SqlAnswer, type TestApp } from '../support/app';
import { givenSalesFile } from '../support/modelsData';
import { givenProject } from '../support/world';

const DAY = 86_400_000;
const nextDay = (day: string, n = 1) => new Date(Date.parse(day) + n * DAY).toISOString().slice(0, 10);

describe('time-series models (ORDER BY … GROUP BY … WINDOW … HORIZON …)', () => {
  let t: TestApp;
  /** 120 days of three stores' sales, and a forecaster trained on them (window 14, horizon 7). */
  let sales: string;
  let project: string;
  const sql = (query: string) => querySql(t, query);
  const cell = (a: SqlAnswer, column: string, row = 0) => a.data![row]![a.column_names!.indexOf(column)];
  const create = (name: string, clauses: string, extra = '') =>
    sql(
      `CREATE MODEL ${project}.${name} FROM files (SELECT * FROM ${sales}) PREDICT sales ${clauses} USING join_learn_process = true${extra}`,
    );

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    sales = (await givenSalesFile(t, 120)).name;
    project = (await givenProject(t)).name;
    const created = await create('forecast', 'ORDER BY day GROUP BY store WINDOW 14 HORIZON 7');
    expect(cell(created, 'STATUS')).toBe('complete');
  }, 120_000);
  afterAll(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
  });

  it('records the time-series settings in the definition and shows them as MindsDB does', async () => {
    // Given the forecaster, when its definition is read back
    const model = (await t.http.get(`/api/projects/${project}/models/forecast`).expect(200)).body;
    // Then problem_definition carries MindsDB's timeseries_settings
    expect(model.problem_definition).toEqual({
      target: 'sales',
      timeseries_settings: {
        is_timeseries: true,
        order_by: 'day',
        group_by: ['store'],
        window: 14,
        horizon: 7,
      },
      using: { join_learn_process: true },
    });
    expect(model).toMatchObject({ status: 'complete', target_type: 'numeric', progress: 100 });
    const info = await sql(`DESCRIBE ${project}.forecast`);
    expect(cell(info, 'task')).toBe('forecast');
    const features = await sql(`DESCRIBE ${project}.forecast.features`);
    expect(features.data).toEqual([
      ['day', 'date', 'TimeSeriesOrder', 'order_by', null],
      ['store', 'categorical', 'TimeSeriesGroup', 'group_by', null],
      ['sales', 'float', 'TimeSeriesLags', 'target', null],
    ]);
  });

  it('forecasts the next HORIZON days of every store after the latest rows (WHERE t.day > LATEST)', async () => {
    // When the model is joined with its history and asked for what comes after the latest rows
    const a = await sql(
      `SELECT m.store, m.day, m.sales, m.sales_min, m.sales_max FROM files.${sales} AS t JOIN ${project}.forecast AS m WHERE t.day > LATEST`,
    );
    // Then 7 dated rows per store follow the last day of the history (2022-04-30)
    expect(a.type).toBe('table');
    expect(a.data).toHaveLength(3 * 7);
    const last = '2022-04-30';
    expect(a.data!.slice(0, 7).map((r) => [r[0], r[1]])).toEqual(
      Array.from({ length: 7 }, (_, k) => ['small', nextDay(last, k + 1)]),
    );
    expect(new Set(a.data!.map((r) => r[0]))).toEqual(new Set(['small', 'medium', 'large']));
    for (const [, , value, min, max] of a.data!) {
      expect(min as number).toBeLessThanOrEqual(value as number);
      expect(max as number).toBeGreaterThanOrEqual(value as number);
    }
    // And each store's forecast is on its own scale (small ≈ 120, large ≈ 1800 after the trend)
    const firstOf = (store: string) => a.data!.find((r) => r[0] === store)![2] as number;
    expect(firstOf('small')).toBeGreaterThan(90);
    expect(firstOf('small')).toBeLessThan(150);
    expect(firstOf('large')).toBeGreaterThan(1400);
  });

  it('forecasts one group when the WHERE clause chooses its history', async () => {
    const a = await sql(
      `SELECT t.store, t.day, t.sales AS known, m.sales FROM files.${sales} AS t JOIN ${project}.forecast AS m WHERE t.day > LATEST AND t.store = 'medium' LIMIT 10`,
    );
    // The rows of the data side read as the rows that come next: dated, without a value yet
    expect(a.data).toEqual(
      Array.from({ length: 7 }, (_, k) => ['medium', nextDay('2022-04-30', k + 1), null, expect.any(Number)]),
    );
  });

  it('judges history rows when the truth is given: planted outliers are anomalies', async () => {
    // Given later history of the same stores with two planted outliers
    const later = await givenSalesFile(t, 120, [
      { store: 'small', day: 100, times: 0.3 },
      { store: 'large', day: 110, times: -0.25 },
    ]);
    // When the model is joined with it (no LATEST): one prediction per row, one step ahead
    const a = await sql(
      `SELECT t.store, t.day, m.sales, m.sales_original, m.sales_anomaly FROM files.${later.name} AS t JOIN ${project}.forecast AS m`,
    );
    // Then the planted rows are flagged (and little else), rows without a full window get no verdict
    const flagged = a.data!.filter((r) => r[4] === true).map((r) => `${r[0]} ${r[1]}`);
    expect(flagged).toEqual(expect.arrayContaining(['small 2022-04-11', 'large 2022-04-21']));
    expect(flagged.length).toBeLessThanOrEqual(4);
    const first = a.data!.find((r) => r[0] === 'small' && r[1] === '2022-01-01')!;
    expect(first[4]).toBeNull();
  });

  it('keeps forecasting after RETRAIN: the time-series settings carry over', async () => {
    const r = await sql(`RETRAIN ${project}.forecast USING join_learn_process = true`);
    expect(cell(r, 'STATUS')).toBe('complete');
    expect(JSON.parse(String(cell(r, 'TRAINING_OPTIONS'))).timeseries_settings).toMatchObject({
      order_by: 'day',
      horizon: 7,
    });
    const a = await sql(
      `SELECT m.day FROM files.${sales} AS t JOIN ${project}.forecast AS m WHERE t.day > LATEST`,
    );
    expect(a.data).toHaveLength(21);
  });

  describe('refusals, each naming what is wrong', () => {
    it('refuses LATEST with a model that does not forecast', async () => {
      const plain = await sql(
        `CREATE MODEL ${project}.plain FROM files (SELECT * FROM ${sales}) PREDICT sales USING join_learn_process = true`,
      );
      expect(cell(plain, 'STATUS')).toBe('complete');
      const a = await sql(
        `SELECT m.sales FROM files.${sales} AS t JOIN ${project}.plain AS m WHERE t.day > LATEST`,
      );
      expect(a.type).toBe('error');
      expect(a.error_message).toMatch(/plain is not a time-series model/);
    });

    it('refuses LATEST without joined history', async () => {
      const a = await sql(`SELECT sales FROM ${project}.forecast WHERE day > LATEST`);
      expect(a).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/JOIN forecast with its data/),
      });
    });

    it('refuses GROUP BY, WINDOW or HORIZON without ORDER BY', async () => {
      const a = await create('no_order', 'GROUP BY store WINDOW 14');
      expect(a).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/CREATE MODEL no_order: .*needs ORDER BY/),
      });
    });

    it.each([
      ['WINDOW 0', 'ORDER BY day WINDOW 0', /CREATE MODEL bad: Invalid WINDOW/],
      ['HORIZON 2.5', 'ORDER BY day HORIZON 2.5', /CREATE MODEL bad: Invalid HORIZON/],
      ['the target as the order', 'ORDER BY sales', /cannot also order or group/],
      ["target_type = 'categorical'", "ORDER BY day USING target_type = 'categorical'", /forecast numbers/],
    ])('refuses %s when the model is defined, recording nothing', async (_what, clauses, message) => {
      const a = await sql(
        `CREATE MODEL ${project}.bad FROM files (SELECT * FROM ${sales}) PREDICT sales ${clauses}`,
      );
      expect(a).toMatchObject({ type: 'error', error_message: expect.stringMatching(message) });
      await t.http.get(`/api/projects/${project}/models/bad`).expect(404);
    });

    it('answers 400 over REST for the same refusals', async () => {
      const res = await t.http
        .post(`/api/projects/${project}/models`)
        .send({
          query: `CREATE MODEL bad FROM files (SELECT * FROM ${sales}) PREDICT sales ORDER BY day WINDOW -3`,
        })
        .expect(400);
      expect(problemOf(res).detail).toMatch(/CREATE MODEL bad: Invalid WINDOW/);
    });
  });
});
