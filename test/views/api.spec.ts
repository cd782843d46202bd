import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshPostgresData } from '../support/external';
import { givenProject, givenSkill, uniqueName } from '../support/world';

type Logged = { type: string; data: Record<string, unknown>; position: number };

describe.each(storeKinds)('views on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t.dispose());

  const logOf = async (project: string) =>
    ((await t.http.get(`/api/events?stream=project-${project}`).expect(200)).body.events as Logged[]).filter(
      (e) => e.type.startsWith('View'),
    );

  it('CREATE VIEW records the query; the view reads as a table of the project, joins included', async () => {
    const { name: project } = await givenProject(t);
    await givenSkill(t, project, { name: 'a', type: 'sql', params: { database: 'x', tables: ['t'] } });
    await givenSkill(t, project, { name: 'b', type: 'custom' });
    const made = await querySql(
      t,
      `CREATE VIEW ${project}.sql_skills AS (SELECT name, type FROM skills WHERE type = 'sql')`,
    );
    expect(made).toMatchObject({ type: 'ok' });
    expect(await logOf(project)).toEqual([
      expect.objectContaining({
        type: 'ViewCreated',
        data: expect.objectContaining({
          name: 'sql_skills',
          query: "SELECT name, type FROM skills WHERE type = 'sql'",
        }),
      }),
    ]);
    // Bare names in the view mean its own project's tables, whatever the reader's database.
    expect(await querySql(t, `SELECT * FROM ${project}.sql_skills`)).toMatchObject({
      type: 'table',
      data: [['a', 'sql']],
    });
    const joined = await querySql(
      t,
      `SELECT s.name, v.type FROM ${project}.skills AS s JOIN ${project}.sql_skills AS v ON s.name = v.name`,
    );
    expect(joined.data).toEqual([['a', 'sql']]);
    // A view of a view.
    await querySql(t, `CREATE VIEW ${project}.counted AS (SELECT COUNT(*) AS n FROM sql_skills)`);
    expect((await querySql(t, `SELECT n FROM ${project}.counted`)).data).toEqual([[1]]);
    // It follows the data: a new skill shows at once.
    await givenSkill(t, project, { name: 'c', type: 'sql', params: { database: 'x', tables: ['t'] } });
    expect((await querySql(t, `SELECT n FROM ${project}.counted`)).data).toEqual([[2]]);
  });

  it('SHOW VIEWS, p.views, information_schema.VIEWS, SHOW FULL TABLES and DESCRIBE VIEW list it', async () => {
    const { name: project } = await givenProject(t);
    await querySql(t, `CREATE VIEW ${project}.one AS (SELECT 1 AS x)`);
    const expected = [['one', project, 'SELECT 1 AS x']];
    expect((await querySql(t, `SHOW VIEWS FROM ${project}`)).data).toEqual(expected);
    expect((await querySql(t, `SELECT * FROM ${project}.views`)).data).toEqual(expected);
    expect(
      (
        await querySql(
          t,
          `SELECT NAME, PROJECT, QUERY FROM information_schema.VIEWS WHERE PROJECT = '${project}'`,
        )
      ).data,
    ).toEqual(expected);
    expect((await querySql(t, `DESCRIBE VIEW ${project}.one`)).data).toEqual(expected);
    const tables = await querySql(t, `SHOW FULL TABLES FROM ${project}`);
    expect(tables.data).toContainEqual(['one', 'VIEW']);
  });

  it('refuses a view whose query does not resolve, is not a SELECT, or takes a project table name; nothing recorded', async () => {
    const { name: project } = await givenProject(t);
    const missing = await querySql(t, `CREATE VIEW ${project}.v AS (SELECT * FROM nothere)`);
    expect(missing).toMatchObject({ type: 'error', error_code: 1210 });
    expect(missing.error_message).toMatch(/nothere/);
    const notSelect = await querySql(t, `CREATE VIEW ${project}.v AS (DROP PROJECT ${project})`);
    expect(notSelect.error_message).toMatch(/must be a SELECT/);
    const reserved = await querySql(t, `CREATE VIEW ${project}.models AS (SELECT 1)`);
    expect(reserved.error_message).toMatch(/models is the name of a table every project has/);
    expect(await logOf(project)).toEqual([]);
  });

  it('CREATE OR REPLACE, ALTER and DROP VIEW change the log and the answers; DROP MODEL drops a view too (the SDK does)', async () => {
    const { name: project } = await givenProject(t);
    await querySql(t, `CREATE VIEW ${project}.v AS (SELECT 1 AS x)`);
    expect((await querySql(t, `CREATE VIEW ${project}.v AS (SELECT 2 AS x)`)).error_code).toBe(1062);
    await querySql(t, `CREATE OR REPLACE VIEW ${project}.v AS (SELECT 2 AS x)`);
    expect((await querySql(t, `SELECT x FROM ${project}.v`)).data).toEqual([[2]]);
    await querySql(t, `ALTER VIEW ${project}.v AS (SELECT 3 AS x)`);
    expect((await querySql(t, `SELECT x FROM ${project}.v`)).data).toEqual([[3]]);
    await querySql(t, `DROP VIEW ${project}.v`);
    expect((await querySql(t, `SELECT x FROM ${project}.v`)).error_code).toBe(1146);
    expect((await querySql(t, `DROP VIEW IF EXISTS ${project}.v`)).type).toBe('ok');
    await querySql(t, `CREATE VIEW ${project}.w AS (SELECT 1 AS x)`);
    expect((await querySql(t, `DROP MODEL ${project}.w`)).type).toBe('ok');
    expect((await logOf(project)).map((e) => e.type)).toEqual([
      'ViewCreated',
      'ViewUpdated',
      'ViewUpdated',
      'ViewDeleted',
      'ViewCreated',
      'ViewDeleted',
    ]);
  });

  it('a view over an external database reads it at query time', async () => {
    const source = await freshPostgresData([
      'CREATE TABLE sales (region text, amount integer)',
      "INSERT INTO sales VALUES ('north', 10), ('south', 5), ('north', 7)",
    ]);
    try {
      const { name: project } = await givenProject(t);
      const db = uniqueName('pgv');
      await t.http
        .post('/api/databases')
        .send({ database: { name: db, engine: 'postgres', parameters: source.parameters } })
        .expect(201);
      await querySql(
        t,
        `CREATE VIEW ${project}.by_region AS (SELECT region, SUM(amount) AS total FROM ${db}.sales GROUP BY region)`,
      );
      expect((await querySql(t, `SELECT * FROM ${project}.by_region ORDER BY region`)).data).toEqual([
        ['north', 17],
        ['south', 5],
      ]);
    } finally {
      await source.drop();
    }
  });

  it('REST as MindsDB: POST 201 {id,name,query}, GET, PUT upsert (201 then 200), DELETE 204, 404 and 409', async () => {
    const { name: project } = await givenProject(t);
    const created = await t.http
      .post(`/api/projects/${project}/views`)
      .send({ view: { name: 'r', query: 'SELECT 1 AS x' } })
      .expect(201);
    expect(created.body).toEqual({ id: expect.any(Number), name: 'r', query: 'SELECT 1 AS x' });
    expect((await t.http.get(`/api/projects/${project}/views/r`).expect(200)).body).toEqual(created.body);
    expect((await t.http.get(`/api/projects/${project}/views`).expect(200)).body).toEqual([created.body]);
    const dup = await t.http
      .post(`/api/projects/${project}/views`)
      .send({ view: { name: 'r', query: 'SELECT 2' } })
      .expect(409);
    expect(problemOf(dup).detail).toMatch(/View already exists: r/);
    await t.http
      .put(`/api/projects/${project}/views/r`)
      .send({ view: { query: 'SELECT 2 AS x' } })
      .expect(200);
    const fresh = await t.http
      .put(`/api/projects/${project}/views/s`)
      .send({ view: { query: 'SELECT 3 AS y' } })
      .expect(201);
    expect(fresh.body).toMatchObject({ name: 's', query: 'SELECT 3 AS y' });
    expect((await querySql(t, `SELECT x FROM ${project}.r`)).data).toEqual([[2]]);
    await t.http.delete(`/api/projects/${project}/views/r`).expect(204);
    expect(problemOf(await t.http.get(`/api/projects/${project}/views/r`).expect(404)).detail).toMatch(
      /View with name r/,
    );
    expect(problemOf(await t.http.get(`/api/projects/nope_${project}/views`).expect(404)).title).toBe(
      'Project not found',
    );
    const bad = await t.http
      .post(`/api/projects/${project}/views`)
      .send({ view: { name: 'q' } })
      .expect(400);
    expect(problemOf(bad).detail).toMatch(/query/);
  });

  it('deleting the project deletes its views', async () => {
    const { name: project } = await givenProject(t);
    await querySql(t, `CREATE VIEW ${project}.v AS (SELECT 1 AS x)`);
    await t.http.delete(`/api/projects/${project}`).expect(204);
    expect(
      (await querySql(t, `SELECT * FROM information_schema.VIEWS WHERE PROJECT = '${project}'`)).data,
    ).toEqual([]);
    expect((await logOf(project)).map((e) => e.type)).toEqual(['ViewCreated', 'ViewDeleted']);
  });
});
