import pg from 'pg';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshPostgresData, postgresParameters } from '../support/external';
import { connectSdk, type Sdk } from '../support/sdk';
import { givenProject, givenSkill, uniqueName } from '../support/world';

// The official mindsdb-js-sdk's Tables module, unchanged: createTable, createOrReplaceTable,
// table.delete, against a real PostgreSQL registered as an integration.
describe.each(storeKinds)('mindsdb-js-sdk Tables on %s', (store) => {
  let t: TestApp;
  let sdk: Sdk;
  let close: () => Promise<void>;
  beforeAll(async () => {
    t = await startTestApp(store);
    ({ sdk, close } = await connectSdk(t));
  });
  afterAll(async () => {
    await close();
    await t.dispose();
  });

  it('creates, replaces and deletes a table in an integration, from a query of the service', async () => {
    const source = await freshPostgresData([]);
    const read = async (sql: string) => {
      const c = new pg.Client(postgresParameters({ database: source.name }));
      await c.connect();
      try {
        return (await c.query({ text: sql, rowMode: 'array' })).rows;
      } finally {
        await c.end();
      }
    };
    try {
      const db = uniqueName('sdk_tables');
      await sdk.Databases.createDatabase(db, 'postgres', source.parameters);
      const { name: project } = await givenProject(t);
      await givenSkill(t, project, { name: 'alpha' });

      const table = await sdk.Tables.createTable(
        'skills_copy',
        db,
        `SELECT name AS name FROM ${project}.skills`,
      );
      expect(table).toMatchObject({ name: 'skills_copy', integration: db });
      expect(await read('SELECT name FROM skills_copy')).toEqual([['alpha']]);

      await sdk.Tables.createOrReplaceTable('skills_copy', db, "SELECT 'beta' AS label");
      expect(await read('SELECT label FROM skills_copy')).toEqual([['beta']]);

      await table.delete();
      expect(
        await read("SELECT count(*)::int FROM information_schema.tables WHERE table_name = 'skills_copy'"),
      ).toEqual([[0]]);

      const events = (await t.http.get(`/api/events?stream=database-writes-${db}`).expect(200)).body
        .events as {
        data: { statement: string };
      }[];
      expect(events.map((e) => e.data.statement)).toEqual([
        'CREATE TABLE',
        'CREATE OR REPLACE TABLE',
        'DROP TABLE',
      ]);

      await expect(sdk.Tables.createTable('x', db, 'SELECT * FROM nothere')).rejects.toThrow(/nothere/);
    } finally {
      await source.drop();
    }
  });
});
