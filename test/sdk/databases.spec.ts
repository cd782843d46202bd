import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshMariaData, freshPostgresData } from '../support/external';
import { connectSdk, type Sdk } from '../support/sdk';
import { uniqueName } from '../support/world';

// The official mindsdb-js-sdk's Databases module, unchanged, against the service and a real
// PostgreSQL and MariaDB: SHOW FULL DATABASES, CREATE DATABASE … WITH ENGINE, PARAMETERS, DROP.
describe.each(storeKinds)('mindsdb-js-sdk Databases on %s', (store) => {
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

  it('lists the databases with their type and engine, projects and files included', async () => {
    const all = await sdk.Databases.getAllDatabases();
    const byName = new Map(all.map((d) => [d.name, d]));
    expect(byName.get('mindsdb')).toMatchObject({ type: 'project' });
    expect(byName.get('files')).toBeDefined();
    expect(byName.get('information_schema')).toBeDefined();
  });

  it.each([
    ['postgres', () => freshPostgresData(['CREATE TABLE t (id int)', 'INSERT INTO t VALUES (1), (2)'])],
    ['mysql', () => freshMariaData(['CREATE TABLE t (id int)', 'INSERT INTO t VALUES (1), (2)'])],
  ])('creates a %s integration, finds it, queries it, and deletes it', async (engine, fresh) => {
    const source = await fresh();
    try {
      const name = uniqueName(`sdk_${engine}`);
      const created = await sdk.Databases.createDatabase(name, engine, source.parameters);
      expect(created).toMatchObject({ name, type: 'data', engine });

      const found = await sdk.Databases.getDatabase(name);
      expect(found).toMatchObject({ name, type: 'data', engine });
      const rows = await sdk.SQL.runQuery(`SELECT id FROM ${name}.t ORDER BY id`);
      expect(rows.rows).toEqual([{ id: 1 }, { id: 2 }]);

      // The log holds the registration; the password never comes back.
      const log = await t.http.get(`/api/events?stream=database-${name}`).expect(200);
      expect(log.body.events.map((e: { type: string }) => e.type)).toEqual(['DatabaseCreated']);

      await found!.delete();
      expect(await sdk.Databases.getDatabase(name)).toBeUndefined();
    } finally {
      await source.drop();
    }
  });

  it('a duplicate name is refused with the message MindsDB clients show', async () => {
    const source = await freshPostgresData([]);
    try {
      const name = uniqueName('sdk_dup');
      await sdk.Databases.createDatabase(name, 'postgres', source.parameters);
      await expect(sdk.Databases.createDatabase(name, 'postgres', source.parameters)).rejects.toThrow(
        new RegExp(name),
      );
    } finally {
      await source.drop();
    }
  });

  it('creates a project through the Databases call without an engine', async () => {
    const name = uniqueName('sdk_project_db');
    const created = await sdk.Databases.createDatabase(name);
    expect(created).toMatchObject({ name, type: 'project' });
    const projects = await sdk.Projects.getAllProjects();
    expect(projects.map((p) => p.name)).toContain(name);
  });
});
