/**
 * Issue 37, defect 2: predictions could not be written out. `INSERT INTO db.t (SELECT … JOIN
 * project.model AS m)` and `CREATE TABLE db.t (SELECT … JOIN …)` answered 1064 "syntax error at end
 * of input" ("at or near LIMIT" with a LIMIT), into PostgreSQL and MariaDB alike, so every job that
 * stored predictions failed. Any SELECT the endpoint answers is the source of INSERT INTO, CREATE
 * TABLE and CREATE OR REPLACE TABLE, in an integration, in `files` and in a job: each table written
 * holds the rows the same SELECT answers.
 */
import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { freshMariaData, freshPostgresData, rowsInExternal, type ExternalEngine } from '../support/external';
import { givenRentalsModel } from '../support/modelsData';
import { connectSdk } from '../support/sdk';
import { givenDatabase, givenProject, uniqueName } from '../support/world';

type Source = { name: string; parameters: Record<string, unknown>; drop: () => Promise<void> };

/** Rentals whose price follows their size and location: the model has something to learn. */
const TRAINING = Array.from({ length: 60 }, (_, i) => {
  const location = ['good', 'great', 'poor'][i % 3]!;
  const sqft = 300 + 17 * i;
  return {
    sqft,
    location,
    rental_price: 2 * sqft + (location === 'great' ? 900 : location === 'good' ? 400 : 0),
  };
});

/** The listings the predictions are made for, in each external database. */
const LISTINGS = [
  [1, 420, 'good'],
  [2, 910, 'great'],
  [3, 655, 'poor'],
  [4, 1200, 'good'],
  [5, 380, 'great'],
  [6, 777, 'poor'],
] as const;
const listingsSetup = (extra: string[]) => [
  'CREATE TABLE listings (id INT PRIMARY KEY, sqft INT, location VARCHAR(20))',
  `INSERT INTO listings VALUES ${LISTINGS.map(([id, sqft, loc]) => `(${id}, ${sqft}, '${loc}')`).join(', ')}`,
  ...extra,
];

/** The answer's rows, an error failing the test with its message. */
const rowsOf = (a: SqlAnswer) => {
  expect(a.error_message).toBeUndefined();
  return a.data!;
};
const byFirst = (rows: unknown[][]) => [...rows].sort((a, b) => Number(a[0]) - Number(b[0]));

const engines: [ExternalEngine, (setup: string[]) => Promise<Source>, string][] = [
  ['postgres', freshPostgresData, 'DOUBLE PRECISION'],
  ['mysql', freshMariaData, 'DOUBLE'],
];

describe.each(storeKinds)('any SELECT written out (event store: %s)', (store) => {
  let t: TestApp;
  let project: string;
  const sql = (query: string) => querySql(t, query);

  beforeAll(async () => {
    t = await startTestApp(store);
    ({ name: project } = await givenProject(t));
    await givenRentalsModel(t, project, TRAINING);
  });
  afterAll(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
  });

  describe.each(engines)('into %s', (engine, fresh, double) => {
    let source: Source;
    let db: string;
    /** Each listing's id and predicted price, as the endpoint answers the join. */
    const joined = () => `SELECT t.id, m.rental_price FROM ${db}.listings AS t JOIN ${project}.rentals AS m`;
    const expected = async () => byFirst(rowsOf(await sql(joined())));
    const rowsIn = (query: string) => rowsInExternal(engine, source.name, query);

    beforeAll(async () => {
      source = await fresh(
        listingsSetup(
          ['preds_all', 'preds_limited', 'preds_job', 'preds_union'].map(
            (table) => `CREATE TABLE ${table} (id BIGINT, rental_price ${double})`,
          ),
        ),
      );
      db = (
        await givenDatabase(t, {
          name: uniqueName(`out_${engine}`),
          engine,
          parameters: source.parameters,
        })
      ).name;
    });
    afterAll(() => source?.drop());

    it('INSERT INTO db.t (SELECT … JOIN model) writes every row’s prediction', async () => {
      // Given the predictions the endpoint answers for the listings
      const answered = await expected();
      expect(answered).toHaveLength(LISTINGS.length);
      // When they are inserted into a table of the database
      const answer = await sql(`INSERT INTO ${db}.preds_all (${joined()})`);
      // Then each row is there, as answered
      expect(answer).toMatchObject({ type: 'ok', affected_rows: LISTINGS.length });
      expect(await rowsIn('SELECT id, rental_price FROM preds_all ORDER BY id')).toEqual(answered);
    });

    it('INSERT INTO db.t SELECT … JOIN model LIMIT 3 writes three of them', async () => {
      const answered = await expected();
      const answer = await sql(`INSERT INTO ${db}.preds_limited ${joined()} LIMIT 3`);
      expect(answer).toMatchObject({ type: 'ok', affected_rows: 3 });
      const written = await rowsIn('SELECT id, rental_price FROM preds_limited ORDER BY id');
      expect(written).toHaveLength(3);
      for (const row of written) expect(answered).toContainEqual(row);
    });

    it('CREATE TABLE db.t (SELECT … JOIN model) makes the table of the answer', async () => {
      const query = `SELECT t.id, t.location, m.rental_price AS predicted FROM ${db}.listings AS t JOIN ${project}.rentals AS m`;
      const answered = byFirst(rowsOf(await sql(query)));
      const answer = await sql(`CREATE TABLE ${db}.created (${query})`);
      expect(answer).toMatchObject({ type: 'ok', affected_rows: LISTINGS.length });
      expect(await rowsIn('SELECT id, location, predicted FROM created ORDER BY id')).toEqual(answered);
    });

    it('CREATE OR REPLACE TABLE db.t (SELECT … JOIN model WHERE … LIMIT) replaces it with the answer', async () => {
      await sql(`CREATE TABLE ${db}.replaced (SELECT 1 AS old_column)`);
      const query = `SELECT t.id, m.rental_price FROM ${db}.listings AS t JOIN ${project}.rentals AS m WHERE t.location = 'good' LIMIT 5`;
      const answered = byFirst(rowsOf(await sql(query)));
      expect(answered.map((r) => r[0])).toEqual([1, 4]);
      const answer = await sql(`CREATE OR REPLACE TABLE ${db}.replaced (${query})`);
      expect(answer).toMatchObject({ type: 'ok', affected_rows: 2 });
      expect(await rowsIn('SELECT id, rental_price FROM replaced ORDER BY id')).toEqual(answered);
    });

    it('INSERT INTO db.t (SELECT …) UNION ALL (SELECT … JOIN model) takes the whole union', async () => {
      // Parenthesized at both ends, yet not one parenthesized query: nothing may be cut off.
      const query = `(SELECT 100 AS id, CAST(1.5 AS DOUBLE) AS rental_price) UNION ALL (${joined()} WHERE t.id = 2)`;
      const answered = byFirst(rowsOf(await sql(query)));
      expect(answered.map((r) => r[0])).toEqual([2, 100]);
      expect(await sql(`INSERT INTO ${db}.preds_union ${query}`)).toMatchObject({
        type: 'ok',
        affected_rows: 2,
      });
      expect(await rowsIn('SELECT id, rental_price FROM preds_union ORDER BY id')).toEqual(answered);
    });

    it('a write whose SELECT fails writes nothing, and its error names the statement', async () => {
      const before = await rowsIn('SELECT count(*) FROM preds_all');
      const answer = await sql(
        `INSERT INTO ${db}.preds_all (SELECT t.id, m.rental_price FROM ${db}.listings AS t JOIN ${project}.rentals.7 AS m)`,
      );
      expect(answer).toMatchObject({ type: 'error', error_code: expect.any(Number) });
      expect(answer.error_message).toMatch(
        new RegExp(`^INSERT INTO ${db}\\.preds_all: .*rentals.*version 7`),
      );
      expect(await rowsIn('SELECT count(*) FROM preds_all')).toEqual(before);
    });

    it('a job storing predictions runs: its history holds no error, the table the rows', async () => {
      const answered = await expected();
      const job = uniqueName('store_predictions');
      expect(
        await sql(`CREATE JOB ${project}.${job} (INSERT INTO ${db}.preds_job (${joined()})) EVERY hour`),
      ).toMatchObject({ type: 'ok' });
      await t.running.jobs.tick();
      const history = await sql(`SELECT ERROR FROM ${project}.jobs_history WHERE NAME = '${job}'`);
      expect(rowsOf(history)).toEqual([[null]]);
      expect(await rowsIn('SELECT id, rental_price FROM preds_job ORDER BY id')).toEqual(answered);
    });

    it('the SDK’s Tables.createTable takes a SELECT with a JOIN', async () => {
      const { sdk, close } = await connectSdk(t);
      try {
        const answered = await expected();
        const table = await sdk.Tables.createTable('sdk_preds', db, joined());
        expect(table).toMatchObject({ name: 'sdk_preds', integration: db });
        expect(await rowsIn('SELECT id, rental_price FROM sdk_preds ORDER BY id')).toEqual(answered);
      } finally {
        await close();
      }
    });
  });

  describe('into files', () => {
    let source: Source;
    let db: string;
    const joined = (tail = '') =>
      `SELECT t.id, t.location, m.rental_price FROM ${db}.listings AS t JOIN ${project}.rentals AS m${tail}`;
    const fileRows = async (file: string) =>
      byFirst(rowsOf(await sql(`SELECT id, location, rental_price FROM files.${file}`)));

    beforeAll(async () => {
      source = await freshPostgresData(listingsSetup([]));
      db = (await givenDatabase(t, { name: uniqueName('out_files'), parameters: source.parameters })).name;
    });
    afterAll(() => source?.drop());

    it('CREATE TABLE files.f (SELECT … JOIN model) makes a file of the answer', async () => {
      const file = uniqueName('predicted');
      const answered = byFirst(rowsOf(await sql(joined())));
      const answer = await sql(`CREATE TABLE files.${file} (${joined()})`);
      expect(answer).toMatchObject({ type: 'ok', affected_rows: LISTINGS.length });
      expect(await fileRows(file)).toEqual(answered);
      const listed = (await t.http.get('/api/files').expect(200)).body as {
        name: string;
        row_count: number;
      }[];
      expect(listed.find((f) => f.name === file)).toMatchObject({ row_count: LISTINGS.length });
      // A second CREATE TABLE of the same name is refused, naming it; the file stays as it was.
      const again = await sql(`CREATE TABLE files.${file} (SELECT 1 AS id)`);
      expect(again).toMatchObject({ type: 'error' });
      expect(again.error_message).toMatch(new RegExp(`^CREATE TABLE files\\.${file}: .*exists`));
      expect(await fileRows(file)).toEqual(answered);
    });

    it('INSERT INTO files.f (SELECT … JOIN model LIMIT 3) appends to a file, and makes one that is not there', async () => {
      const file = uniqueName('appended');
      const answered = byFirst(rowsOf(await sql(joined())));
      expect(await sql(`CREATE TABLE files.${file} (${joined(' WHERE t.id <= 2')})`)).toMatchObject({
        affected_rows: 2,
      });
      const answer = await sql(
        `INSERT INTO files.${file} (${joined(' WHERE t.id > 2 ORDER BY t.id LIMIT 3')})`,
      );
      expect(answer).toMatchObject({ type: 'ok', affected_rows: 3 });
      expect(await fileRows(file)).toEqual(answered.slice(0, 5));
      const fresh = uniqueName('inserted');
      expect(await sql(`INSERT INTO files.${fresh} ${joined()} LIMIT 3`)).toMatchObject({
        type: 'ok',
        affected_rows: 3,
      });
      const made = await fileRows(fresh);
      expect(made).toHaveLength(3);
      for (const row of made) expect(answered).toContainEqual(row);
    });

    it('CREATE OR REPLACE TABLE files.f (SELECT … JOIN model) replaces it with the answer', async () => {
      const file = uniqueName('replaced');
      await sql(`CREATE TABLE files.${file} (SELECT 1 AS id, 'x' AS location, 2.5 AS rental_price)`);
      const answered = byFirst(rowsOf(await sql(joined())));
      const answer = await sql(`CREATE OR REPLACE TABLE files.${file} (${joined()})`);
      expect(answer).toMatchObject({ type: 'ok', affected_rows: LISTINGS.length });
      expect(await fileRows(file)).toEqual(answered);
    });

    it('an INSERT whose rows do not fit the file changes nothing, and says which column or value does not', async () => {
      const file = uniqueName('kept');
      await sql(`CREATE TABLE files.${file} (${joined()})`);
      const before = await fileRows(file);
      const unknown = await sql(`INSERT INTO files.${file} (SELECT 7 AS id, 'poor' AS neighbourhood)`);
      expect(unknown).toMatchObject({ type: 'error' });
      expect(unknown.error_message).toMatch(new RegExp(`^INSERT INTO files\\.${file}: .*neighbourhood`));
      const mistyped = await sql(
        `INSERT INTO files.${file} (id, location) (SELECT 'seven' AS n, 'poor' AS l)`,
      );
      expect(mistyped).toMatchObject({ type: 'error' });
      expect(mistyped.error_message).toMatch(
        new RegExp(`^INSERT INTO files\\.${file}: a value does not fit its column's type: .*seven`),
      );
      expect(await fileRows(file)).toEqual(before);
    });
  });
});
