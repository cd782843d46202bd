import { querySql, startTestApp, type SqlAnswer, type TestApp } from '../support/app';
import { givenSharedFile } from '../support/modelsData';
import { givenProject } from '../support/world';

/** MindsDB's tutorial question: four of the training columns given. */
const TUTORIAL = "sqft = 823 AND location = 'good' AND neighborhood = 'downtown' AND days_on_market = 10";
/** Rows of 800–850 sqft in good downtown locations rent for 3,279–4,742. */
const LOW = 3279;
const HIGH = 4742;

describe('predictions from rows lacking inputs (issue 59)', () => {
  let t: TestApp;
  let rentals: string;
  let project: string;
  const sql = (query: string) => querySql(t, query);
  const cell = (a: SqlAnswer, column: string, row = 0) => a.data![row]![a.column_names!.indexOf(column)];
  const ask = async (model: string, where: string) => {
    const a = await sql(
      `SELECT rental_price, rental_price_confidence, rental_price_explain FROM ${project}.${model} WHERE ${where}`,
    );
    return {
      value: cell(a, 'rental_price') as number,
      confidence: cell(a, 'rental_price_confidence') as number,
      explain: JSON.parse(cell(a, 'rental_price_explain') as string) as Record<string, unknown>,
    };
  };

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    rentals = await givenSharedFile(t, 'home_rentals.csv');
    project = (await givenProject(t)).name;
    const without = `SELECT number_of_rooms, number_of_bathrooms, sqft, location, days_on_market, neighborhood, rental_price FROM ${rentals}`;
    for (const [name, select] of [
      ['every_column', `SELECT * FROM ${rentals}`],
      ['without_initial_price', without],
    ] as const) {
      const created = await sql(
        `CREATE MODEL ${project}.${name} FROM files (${select}) PREDICT rental_price USING join_learn_process = true`,
      );
      expect(cell(created, 'STATUS')).toBe('complete');
    }
  }, 90_000);
  afterAll(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
  });

  it.each([
    [
      'every_column',
      ['number_of_rooms', 'number_of_bathrooms', 'initial_price'],
      ' AND initial_price = 4545',
    ],
    ['without_initial_price', ['number_of_rooms', 'number_of_bathrooms'], ''],
  ])(
    '%s answers the tutorial inside the neighbours’ range, less sure than a whole row, naming what was missing',
    async (model, missing, extra) => {
      const partial = await ask(model, TUTORIAL);
      expect(partial.value).toBeGreaterThanOrEqual(LOW);
      expect(partial.value).toBeLessThanOrEqual(HIGH);
      // A whole row (the data's 823 sqft good downtown flat: 3 rooms, 2 bathrooms, 4,545)
      const whole = await ask(
        model,
        `${TUTORIAL} AND number_of_rooms = 3 AND number_of_bathrooms = 2${extra}`,
      );
      expect(Math.abs(whole.value - 4545)).toBeLessThan(150);
      expect(partial.confidence).toBeLessThan(whole.confidence);
      // MindsDB's keys first, as they were; then what was missing and how it was filled
      expect(Object.keys(partial.explain).slice(0, 6)).toEqual([
        'predicted_value',
        'confidence',
        'anomaly',
        'truth',
        'confidence_lower_bound',
        'confidence_upper_bound',
      ]);
      expect(partial.explain).toMatchObject({
        missing_inputs: missing,
        unseen_inputs: [],
        out_of_range_inputs: [],
      });
      expect(partial.explain.filled_with).toMatch(
        /16 training rows nearest on sqft, location, days_on_market, neighborhood/,
      );
      const upper = partial.explain.confidence_upper_bound as number;
      const lower = partial.explain.confidence_lower_bound as number;
      expect(upper - lower).toBeGreaterThan(
        (whole.explain.confidence_upper_bound as number) - (whole.explain.confidence_lower_bound as number),
      );
      // A whole row's explanation keeps MindsDB's keys only
      expect(Object.keys(whole.explain)).toHaveLength(6);
    },
    30_000,
  );

  it('names an unseen category and an input out of the training range, over REST too', async () => {
    const res = await t.http
      .post(`/api/projects/${project}/models/without_initial_price/predict`)
      .send([
        {
          sqft: 823,
          location: 'on the moon',
          neighborhood: 'downtown',
          number_of_rooms: 3,
          number_of_bathrooms: 2,
        },
        {
          sqft: 40000,
          location: 'good',
          neighborhood: 'downtown',
          number_of_rooms: 3,
          number_of_bathrooms: 2,
          days_on_market: 10,
        },
      ])
      .expect(200);
    const [unseen, far] = (res.body as Record<string, string>[]).map(
      (r) => JSON.parse(r.rental_price_explain!) as Record<string, unknown>,
    );
    expect(unseen).toMatchObject({ missing_inputs: ['days_on_market'], unseen_inputs: ['location'] });
    expect(far).toMatchObject({ missing_inputs: [], unseen_inputs: [], out_of_range_inputs: ['sqft'] });
  });

  it('says in DESCRIBE how missing inputs are handled', async () => {
    const info = await sql(`DESCRIBE ${project}.without_initial_price`);
    expect(cell(info, 'missing_inputs')).toMatch(/nearest on the inputs given/);
    const model = await sql(`DESCRIBE ${project}.without_initial_price.model`);
    expect(cell(model, 'missing_inputs')).toMatch(/widens/);
  });
});
