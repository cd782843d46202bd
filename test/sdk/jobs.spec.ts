import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { connectSdk, type Sdk } from '../support/sdk';
import { manualClock, NO_POLL } from '../jobs/support';

// The official mindsdb-js-sdk 2.3.2 has no Jobs module: its users drive jobs through SQL.runQuery.
describe.each(storeKinds)('mindsdb-js-sdk drives jobs through SQL on %s', (store) => {
  let t: TestApp;
  let sdk: Sdk;
  let close: () => Promise<void>;
  const time = manualClock('2030-01-01T00:00:00.000Z');
  beforeAll(async () => {
    t = await startTestApp(store, NO_POLL, { clock: time.clock });
    ({ sdk, close } = await connectSdk(t));
  });
  afterAll(async () => {
    await close();
    await t.dispose();
  });

  it('creates a job, lists it, reads its history after it ran, and drops it', async () => {
    // Given a job made through the SDK's SQL
    const created = await sdk.SQL.runQuery(
      "CREATE JOB mindsdb.sdk_job (SELECT 42 AS answer) START '2030-01-01 01:00:00' EVERY 1 hour",
    );
    expect(created.error_message).toBeUndefined();
    // Then SHOW JOBS and the project's jobs table show it, with lower-cased columns
    const shown = await sdk.SQL.runQuery('SHOW JOBS');
    expect(shown.rows).toEqual([
      expect.objectContaining({
        name: 'sdk_job',
        project: 'mindsdb',
        schedule_str: 'every 1 hour',
        query: 'SELECT 42 AS answer',
      }),
    ]);
    // When its start comes and the scheduler looks
    time.set('2030-01-01T01:00:00.000Z');
    await t.running.jobs.tick();
    // Then its run is in the project's jobs_history
    const history = await sdk.SQL.runQuery("SELECT * FROM mindsdb.jobs_history WHERE name = 'sdk_job'");
    expect(history.columnNames).toEqual(['name', 'project', 'run_start', 'run_end', 'error', 'query']);
    expect(history.rows).toEqual([
      expect.objectContaining({
        name: 'sdk_job',
        project: 'mindsdb',
        error: null,
        query: 'SELECT 42 AS answer; ',
      }),
    ]);
    const jobs = await sdk.SQL.runQuery('SELECT name, next_run_at FROM mindsdb.jobs');
    expect(jobs.rows).toHaveLength(1);
    // When it is dropped, it is gone
    expect((await sdk.SQL.runQuery('DROP JOB mindsdb.sdk_job')).error_message).toBeUndefined();
    expect((await sdk.SQL.runQuery('SHOW JOBS')).rows).toEqual([]);
  });

  it('hands back why a job cannot be made', async () => {
    const result = await sdk.SQL.runQuery('CREATE JOB mindsdb.bad (SELECT 1) EVERY 3 eons');
    expect(result.type).toBe('error');
    expect(result.error_message).toMatch(/Unknown period: eons/);
  });
});
