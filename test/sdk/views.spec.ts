import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { connectSdk, type Sdk } from '../support/sdk';
import { givenProject, givenSkill } from '../support/world';

// The official mindsdb-js-sdk's Views module, unchanged: createView, getAllViews, view.delete
// (which sends DROP MODEL, as MindsDB takes it for views too).
describe.each(storeKinds)('mindsdb-js-sdk Views on %s', (store) => {
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

  it('creates a view, lists it among the views, queries it, and deletes it', async () => {
    const { name: project } = await givenProject(t);
    await givenSkill(t, project, { name: 'alpha', type: 'sql', params: { database: 'x', tables: ['t'] } });
    const view = await sdk.Views.createView(
      'sql_skills',
      project,
      "SELECT name FROM skills WHERE type = 'sql'",
    );
    expect(view).toMatchObject({ name: 'sql_skills', project });

    const all = await sdk.Views.getAllViews(project);
    expect(all.map((v) => v.name)).toEqual(['sql_skills']);

    const rows = await sdk.SQL.runQuery(`SELECT * FROM ${project}.sql_skills`);
    expect(rows.rows).toEqual([{ name: 'alpha' }]);

    await all[0]!.delete();
    expect(await sdk.Views.getAllViews(project)).toEqual([]);
    const events = (await t.http.get(`/api/events?stream=project-${project}`).expect(200)).body.events as {
      type: string;
    }[];
    expect(events.map((e) => e.type).filter((type) => type.startsWith('View'))).toEqual([
      'ViewCreated',
      'ViewDeleted',
    ]);
  });

  it('a view of a table that does not exist is refused with the reason', async () => {
    const { name: project } = await givenProject(t);
    await expect(sdk.Views.createView('broken', project, 'SELECT * FROM nothere')).rejects.toThrow(/nothere/);
  });
});
