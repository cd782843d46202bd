import pg from 'pg';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshPostgresData, postgresParameters } from '../support/external';
import { connectSdk, type Sdk } from '../support/sdk';
import { uniqueName } from '../support/world';

// The SDK has no Triggers module: its users send the statements through SQL.runQuery.
describe.each(storeKinds)('triggers through mindsdb-js-sdk SQL on %s', (store) => {
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

  it('creates, lists, fires and drops a trigger', async () => {
    const source = await freshPostgresData(['CREATE TABLE inbox (id int)', 'CREATE TABLE seen (id bigint)']);
    try {
      const db = uniqueName('sdk_trg');
      await sdk.Databases.createDatabase(db, 'postgres', source.parameters);
      const made = await sdk.SQL.runQuery(
        `CREATE TRIGGER mindsdb.seen_it ON ${db}.inbox (INSERT INTO ${db}.seen (SELECT id FROM TABLE_DELTA))`,
      );
      expect(made.error_message).toBeUndefined();
      expect((await sdk.SQL.runQuery('SHOW TRIGGERS')).rows).toContainEqual(
        expect.objectContaining({ name: 'seen_it', database: db, table: 'inbox' }),
      );
      const c = new pg.Client(postgresParameters({ database: source.name }));
      await c.connect();
      await c.query('INSERT INTO inbox VALUES (7)');
      await t.running.triggers.tick();
      expect((await c.query('SELECT id::int AS id FROM seen')).rows).toEqual([{ id: 7 }]);
      await c.end();
      expect((await sdk.SQL.runQuery('DROP TRIGGER mindsdb.seen_it')).error_message).toBeUndefined();
    } finally {
      await source.drop();
    }
  });
});
