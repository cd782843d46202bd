import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { connectSdk, type Sdk } from '../support/sdk';
import { uniqueName } from '../support/world';

// The official mindsdb-js-sdk, unchanged, against the service: Projects and SQL.
describe.each(storeKinds)('mindsdb-js-sdk Projects and SQL on %s', (store) => {
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

  it('lists the projects, the default mindsdb among them', async () => {
    const projects = await sdk.Projects.getAllProjects();
    expect(projects.map((p) => p.name)).toContain('mindsdb');
  });

  it('runs a SQL query and reads its rows by lower-cased column name', async () => {
    const result = await sdk.SQL.runQuery('SELECT 1 + 1 AS two, 3 AS Three');
    expect(result.type).toBe('table');
    expect(result.columnNames).toEqual(['two', 'three']);
    expect(result.rows).toEqual([{ two: 2, three: 3 }]);
  });

  it('creates a project through SQL and finds it through the Projects API', async () => {
    const name = uniqueName('sdk_proj');
    const result = await sdk.SQL.runQuery(`CREATE PROJECT ${name}`);
    expect(result.error_message).toBeUndefined();
    const projects = await sdk.Projects.getAllProjects();
    expect(projects.map((p) => p.name)).toContain(name);
  });

  it('hands back the error message of a refused statement', async () => {
    const result = await sdk.SQL.runQuery('SELECT * FROM mindsdb.no_such_table');
    expect(result.type).toBe('error');
    expect(result.error_message).toMatch(/no_such_table/);
  });
});
