import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { readSharedCsv, sharedData } from '../support/data';
import { freshMariaData, freshPostgresData } from '../support/external';
import { eventsOf, givenDatabase, givenFile, givenProject, uniqueName } from '../support/world';

/** home_rentals' rows as SQL VALUES (the two `"640,56"`-style sqft cells left out). */
const rentalValues = async () =>
  (await readSharedCsv('home_rentals.csv'))
    .filter((r) => /^\d+$/.test(r.sqft!))
    .map(
      (r) =>
        `(${r.number_of_rooms}, ${r.number_of_bathrooms}, ${r.sqft}, '${r.location}', ${r.days_on_market}, ${r.initial_price}, '${r.neighborhood}', ${r.rental_price})`,
    );
const RENTALS_TABLE = (int: string) =>
  `CREATE TABLE rentals (number_of_rooms ${int}, number_of_bathrooms ${int}, sqft ${int}, location varchar(20), days_on_market ${int}, initial_price ${int}, neighborhood varchar(40), rental_price double precision)`;

/** The answer's rows as objects (column name → value). */
const rowsOf = (a: SqlAnswer) => {
  expect(a.error_message).toBeUndefined();
  return a.data!.map((row) => Object.fromEntries(a.column_names!.map((c, i) => [c, row[i]])));
};

// Batch and one-row predictions in SQL, as MindsDB users write them: versioned model references,
// joins with or without ON, with files, subqueries, projections' tables and external databases'
// tables, and prediction options in a closing USING.
describe.each(storeKinds)('predictions in SQL (event store: %s)', (store) => {
  let t: TestApp;
  let project: string;
  let file: string;
  let pg: Awaited<ReturnType<typeof freshPostgresData>>;
  let pgName: string;
  const sql = (query: string) => querySql(t, query);
  /** What REST predicts for these rows with this model reference (`rentals.1`…). */
  const restPredict = async (
    ref: string,
    rows: Record<string, unknown>[],
    params: Record<string, unknown> = {},
  ) =>
    (
      await t.http
        .post(`/api/projects/${project}/models/${ref}/predict`)
        .send({ data: rows, params })
        .expect(200)
    ).body as Record<string, unknown>[];

  beforeAll(async () => {
    t = await startTestApp(store);
    file = (await givenFile(t, sharedData('home_rentals.csv'), uniqueName('rentals'))).name;
    ({ name: project } = await givenProject(t));
    // Version 1 knows sqft only; version 2 (active) every column: their predictions differ.
    const v1 = await sql(
      `CREATE MODEL ${project}.rentals FROM files (SELECT sqft, rental_price FROM ${file}) PREDICT rental_price USING join_learn_process = true`,
    );
    expect(rowsOf(v1)[0]!.STATUS).toBe('complete');
    const v2 = await sql(
      `RETRAIN ${project}.rentals FROM files (SELECT * FROM ${file}) USING join_learn_process = true`,
    );
    expect(rowsOf(v2)[0]!.STATUS).toBe('complete');
    pg = await freshPostgresData([
      RENTALS_TABLE('int'),
      `INSERT INTO rentals VALUES ${(await rentalValues()).join(', ')}`,
    ]);
    pgName = (await givenDatabase(t, { name: uniqueName('pg'), parameters: pg.parameters })).name;
  });
  afterAll(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
    await pg?.drop();
  });

  describe('versioned model references', () => {
    it('predicts one row from the version named, active or not, backticked or not', async () => {
      const where = `WHERE sqft = 700 AND location = 'good' AND number_of_rooms = 1`;
      const v1 = rowsOf(await sql(`SELECT rental_price FROM \`${project}\`.\`rentals\`.1 ${where}`));
      const v2 = rowsOf(await sql(`SELECT rental_price FROM ${project}.rentals.2 ${where}`));
      const active = rowsOf(await sql(`SELECT rental_price FROM ${project}.rentals ${where}`));
      const input = [{ sqft: 700, location: 'good', number_of_rooms: 1 }];
      expect(v1[0]!.rental_price).toBeCloseTo(
        (await restPredict('rentals.1', input))[0]!.rental_price as number,
        6,
      );
      expect(v2[0]!.rental_price).toBeCloseTo(
        (await restPredict('rentals.2', input))[0]!.rental_price as number,
        6,
      );
      expect(active).toEqual(v2);
      expect(v1[0]!.rental_price).not.toBeCloseTo(v2[0]!.rental_price as number, 3);
    });

    it('predicts one row from bound parameters exactly as from the literals (a parameter gave no row)', async () => {
      const literal = rowsOf(
        await sql(`SELECT rental_price, sqft FROM ${project}.rentals WHERE sqft = 823 AND location = 'good'`),
      );
      const bound = rowsOf(
        await querySql(
          t,
          `SELECT rental_price, sqft FROM ${project}.rentals WHERE sqft = :s AND location = :l`,
          {
            params: { s: 823, l: 'good' },
          },
        ),
      );
      expect(literal).toHaveLength(1);
      expect(bound).toEqual(literal);
      // A parameter on the left, and one bound to a value the literal would not give.
      const other = rowsOf(
        await querySql(
          t,
          `SELECT rental_price FROM ${project}.rentals WHERE :s = sqft AND location = 'good'`,
          {
            params: { s: 400 },
          },
        ),
      );
      expect(other).toHaveLength(1);
      expect(other[0]!.rental_price).not.toBeCloseTo(literal[0]!.rental_price as number, 3);
    });

    it('joins a version without ON as the SDK writes it (backticked dotted names), one prediction per row', async () => {
      const a = await sql(
        `SELECT m.\`rental_price\` AS predicted, t.*, m.*\nFROM \`files\`.\`${file}\` AS t\nJOIN \`${project}\`.\`rentals\`.1 AS m\n\nLIMIT 5`,
      );
      const rows = rowsOf(a);
      expect(rows).toHaveLength(5);
      const inputs = rowsOf(await sql(`SELECT * FROM files.${file} LIMIT 5`));
      const expected = await restPredict('rentals.1', inputs);
      rows.forEach((row, i) => {
        expect(row.sqft).toBe(inputs[i]!.sqft);
        expect(row.predicted).toBeCloseTo(expected[i]!.rental_price as number, 6);
      });
    });

    it('joins a version with ON, and with the model first in FROM, without ON', async () => {
      const inputs = rowsOf(await sql(`SELECT * FROM files.${file} LIMIT 3`));
      const expected = (await restPredict('rentals.1', inputs)).map((r) => r.rental_price as number);
      const withOn = rowsOf(
        await sql(
          `SELECT t.sqft, m.rental_price FROM files.${file} AS t JOIN ${project}.rentals.1 AS m ON t.sqft = m.sqft LIMIT 3`,
        ),
      );
      const modelFirst = rowsOf(
        await sql(
          `SELECT t.sqft, m.rental_price FROM ${project}.rentals.1 AS m JOIN files.${file} AS t LIMIT 3`,
        ),
      );
      for (const rows of [withOn, modelFirst]) {
        expect(rows.map((r) => r.sqft)).toEqual(inputs.map((r) => r.sqft));
        rows.forEach((r, i) => expect(r.rental_price).toBeCloseTo(expected[i]!, 6));
      }
    });

    it('refuses a version the model does not have, naming it, in FROM and in JOIN', async () => {
      const alone = await sql(`SELECT * FROM ${project}.rentals.9 WHERE sqft = 700`);
      expect(alone).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/rentals.*version 9/),
      });
      const joined = await sql(
        `SELECT m.rental_price FROM files.${file} AS t JOIN ${project}.rentals.7 AS m LIMIT 1`,
      );
      expect(joined).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/rentals.*version 7/),
      });
    });
  });

  describe('joined with an external database’s table', () => {
    it('predicts the rows PostgreSQL sends, filtered and limited there', async () => {
      const rows = rowsOf(
        await sql(
          `SELECT t.*, m.rental_price AS predicted FROM ${pgName}.rentals AS t JOIN ${project}.rentals AS m WHERE t.sqft > 900 AND t.number_of_rooms >= 2 LIMIT 100`,
        ),
      );
      expect(rows).toHaveLength(100);
      expect(rows.every((r) => (r.sqft as number) > 900 && (r.number_of_rooms as number) >= 2)).toBe(true);
      const inputs = rows.map(({ predicted: _p, ...input }) => input);
      const expected = await restPredict('rentals', inputs);
      rows.forEach((r, i) => expect(r.predicted).toBeCloseTo(expected[i]!.rental_price as number, 6));
    });

    it('reads no more rows of the table than the answer needs', async () => {
      // A view that fails on reading any row past the 50th: a fetch that stops at its LIMIT never does.
      const guarded = await freshPostgresData([
        'CREATE TABLE numbered AS SELECT g AS id, 400 + g AS sqft FROM generate_series(1, 1000) AS g',
        'CREATE VIEW guarded AS SELECT id, sqft, CASE WHEN id > 50 THEN 1 / (id - id) ELSE 1 END AS fails_past_50 FROM numbered',
      ]);
      try {
        const db = (await givenDatabase(t, { name: uniqueName('pg'), parameters: guarded.parameters })).name;
        const query = (limit: number) =>
          `SELECT t.id, m.rental_price FROM ${db}.guarded AS t JOIN ${project}.rentals AS m WHERE t.sqft > 400 LIMIT ${limit}`;
        const rows = rowsOf(await sql(query(10)));
        expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
        expect(await sql(query(60))).toMatchObject({
          type: 'error',
          error_message: expect.stringMatching(/division by zero/),
        });
      } finally {
        await guarded.drop();
      }
    });

    it('answers as the same rows uploaded as a file do, for conditions on the predictions and orderings', async () => {
      const query = (source: string) =>
        `SELECT t.sqft, t.location, m.rental_price FROM ${source} AS t JOIN ${project}.rentals AS m WHERE m.rental_price > 4000 AND t.location = 'great' ORDER BY t.sqft DESC, m.rental_price LIMIT 20`;
      const fromPg = rowsOf(await sql(query(`${pgName}.rentals`)));
      const fromFile = rowsOf(await sql(query(`files.${file}`)));
      expect(fromPg.length).toBeGreaterThan(0);
      expect(fromPg.every((r) => (r.rental_price as number) > 4000 && r.location === 'great')).toBe(true);
      expect(fromPg.map((r) => r.sqft)).toEqual(fromFile.map((r) => r.sqft));
      fromPg.forEach((r, i) => expect(r.rental_price).toBeCloseTo(fromFile[i]!.rental_price as number, 6));
    });

    it('aggregates over every row of the table, not a limited few', async () => {
      const [pgCount] = rowsOf(
        await sql(
          `SELECT count(*) AS n, avg(m.rental_price) AS mean FROM ${pgName}.rentals AS t JOIN ${project}.rentals AS m LIMIT 1`,
        ),
      );
      expect(pgCount!.n).toBe((await rentalValues()).length);
      expect(pgCount!.mean as number).toBeGreaterThan(0);
    });

    it('predicts over a MariaDB table and a native query', async () => {
      const maria = await freshMariaData([
        RENTALS_TABLE('int'),
        `INSERT INTO rentals VALUES ${(await rentalValues()).slice(0, 300).join(', ')}`,
      ]);
      try {
        const db = (
          await givenDatabase(t, {
            name: uniqueName('maria'),
            engine: 'mariadb',
            parameters: maria.parameters,
          })
        ).name;
        const rows = rowsOf(
          await sql(
            `SELECT t.sqft, t.location, m.rental_price FROM ${db}.rentals AS t JOIN ${project}.rentals AS m WHERE t.location = 'good' LIMIT 5`,
          ),
        );
        expect(rows).toHaveLength(5);
        expect(rows.every((r) => r.location === 'good')).toBe(true);
        const native = rowsOf(
          await sql(
            `SELECT t.sqft, m.rental_price FROM ${db} (SELECT * FROM rentals WHERE sqft < 500 ORDER BY sqft LIMIT 3) AS t JOIN ${project}.rentals AS m`,
          ),
        );
        expect(native).toHaveLength(3);
        expect(native.every((r) => (r.sqft as number) < 500 && (r.rental_price as number) > 0)).toBe(true);
      } finally {
        await maria.drop();
      }
    });

    it('appends nothing to the log: predicting is a read', async () => {
      const before = await eventsOf(t, `project-${project}`);
      rowsOf(
        await sql(`SELECT m.rental_price FROM ${pgName}.rentals AS t JOIN ${project}.rentals AS m LIMIT 3`),
      );
      expect(await eventsOf(t, `project-${project}`)).toEqual(before);
    });
  });

  describe('joined with a subquery or a project’s table', () => {
    it('predicts each row of a subquery', async () => {
      const rows = rowsOf(
        await sql(
          `SELECT t.sqft, m.rental_price FROM (SELECT 700 AS sqft, 'good' AS location UNION ALL SELECT 900, 'great') AS t JOIN ${project}.rentals AS m`,
        ),
      );
      const expected = await restPredict('rentals', [
        { sqft: 700, location: 'good' },
        { sqft: 900, location: 'great' },
      ]);
      expect(rows.map((r) => r.sqft)).toEqual([700, 900]);
      rows.forEach((r, i) => expect(r.rental_price).toBeCloseTo(expected[i]!.rental_price as number, 6));
    });

    it('pairs a project’s table row by row', async () => {
      const rows = rowsOf(
        await sql(
          `SELECT t.NAME, t.VERSION, m.rental_price FROM ${project}.models AS t JOIN ${project}.rentals AS m ORDER BY t.VERSION`,
        ),
      );
      expect(rows.map((r) => [r.NAME, r.VERSION])).toEqual([
        ['rentals', 1],
        ['rentals', 2],
      ]);
      expect(rows.every((r) => typeof r.rental_price === 'number')).toBe(true);
    });
  });

  describe('USING at predict time', () => {
    it('forces the confidence of a one-row prediction, as REST params do', async () => {
      const [row] = rowsOf(
        await sql(
          `SELECT rental_price_confidence, rental_price_min, rental_price_max FROM ${project}.rentals WHERE sqft = 700 AND location = 'good' USING fixed_confidence = 0.8`,
        ),
      );
      const [rest] = await restPredict('rentals', [{ sqft: 700, location: 'good' }], {
        fixed_confidence: 0.8,
      });
      expect(row!.rental_price_confidence).toBe(0.8);
      expect(row!.rental_price_min).toBeCloseTo(rest!.rental_price_min as number, 6);
      expect(row!.rental_price_max).toBeCloseTo(rest!.rental_price_max as number, 6);
    });

    it('applies to every row of a join, after WHERE and LIMIT', async () => {
      const rows = rowsOf(
        await sql(
          `SELECT m.rental_price_confidence FROM ${pgName}.rentals AS t JOIN ${project}.rentals.1 AS m WHERE t.sqft > 500 LIMIT 4 USING fixed_confidence = 0.5`,
        ),
      );
      expect(rows).toEqual(Array.from({ length: 4 }, () => ({ rental_price_confidence: 0.5 })));
    });

    it('refuses options it does not know, naming them, and options on a query of no model', async () => {
      const unknown = await sql(
        `SELECT * FROM ${project}.rentals WHERE sqft = 700 USING predict_proba = true, colour = 'red'`,
      );
      expect(unknown).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/predict_proba, colour/),
      });
      const noModel = await sql(`SELECT * FROM files.${file} LIMIT 1 USING fixed_confidence = 0.8`);
      expect(noModel).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/fixed_confidence.*no(ne)?/),
      });
      const outOfRange = await sql(
        `SELECT * FROM ${project}.rentals WHERE sqft = 700 USING fixed_confidence = 3`,
      );
      expect(outOfRange).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/fixed_confidence/),
      });
    });

    it('leaves a join’s own USING (columns) alone', async () => {
      const [row] = rowsOf(
        await sql(
          `SELECT count(*) AS n FROM files.${file} AS a JOIN (SELECT DISTINCT sqft FROM files.${file}) AS b USING (sqft)`,
        ),
      );
      expect(row!.n).toBeGreaterThan(0);
    });
  });
});
