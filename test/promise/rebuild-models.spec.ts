import { digestReadModel } from '../../src/projection/digest';
import { CHECKPOINT_TABLE } from '../../src/projection/runner';
import { FILES_SCHEMA } from '../../src/shared/names';
import { sharedData } from '../support/data';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';

const HOME_RENTALS = sharedData('home_rentals.csv');

const modelRows = async (t: TestApp) =>
  (await querySql(t, 'SELECT name, version, active, status FROM mindsdb.models ORDER BY name, version')).data;

const digestOf = (t: TestApp) =>
  t.running.ctx.duck.withReader((c) =>
    digestReadModel(c, { checkpointTable: CHECKPOINT_TABLE, schemas: ['main', FILES_SCHEMA] }),
  );

/**
 * Issue 9, first reproduction: a model's history (retrains, a dropped version, more models) rebuilt
 * from the log with the default batch size must equal what the live process shows.
 */
describe.each(storeKinds)('a rebuilt read model equals the live one: model histories (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { PROJECTION_BATCH_SIZE: '1' });
    await t.http.put('/api/files/home_rentals').attach('file', HOME_RENTALS).expect(200);
    const run = async (query: string) => {
      const answer = await querySql(t, query);
      expect(answer.type).not.toBe('error');
    };
    const from =
      'FROM files (SELECT * FROM home_rentals LIMIT 300) PREDICT rental_price USING join_learn_process = true';
    await run(`CREATE MODEL mindsdb.rb_m ${from}`);
    await run('RETRAIN mindsdb.rb_m USING join_learn_process = true');
    await run('RETRAIN mindsdb.rb_m USING join_learn_process = true');
    await run('DROP MODEL mindsdb.rb_m.2');
    await run(`CREATE MODEL mindsdb.rb_other ${from}`);
    await run(`CREATE MODEL mindsdb.rb_third ${from}`);
    await t.running.services.models.idle();
  }, 120_000);
  afterAll(async () => {
    await t.running.services.models.idle();
    await t.dispose();
  });

  it('given retrains and a dropped version, when rebuilt with every batch size, then models and digests match', async () => {
    const live = await modelRows(t);
    expect(live).toEqual([
      ['rb_m', 1, false, 'complete'],
      ['rb_m', 3, true, 'complete'],
      ['rb_other', 1, true, 'complete'],
      ['rb_third', 1, true, 'complete'],
    ]);
    const liveDigest = await digestOf(t);
    for (const batch of ['1000', '7', '1']) {
      t = await t.restart({ DUCKDB_FILE: ':memory:', PROJECTION_BATCH_SIZE: batch });
      expect(await modelRows(t)).toEqual(live);
      expect(await digestOf(t)).toEqual(liveDigest);
    }
  });

  it('given the rebuilt model, when retrained, then the next version is 4 (no second version 2)', async () => {
    t = await t.restart({ DUCKDB_FILE: ':memory:', PROJECTION_BATCH_SIZE: '1000' });
    expect((await querySql(t, 'RETRAIN mindsdb.rb_m USING join_learn_process = true')).type).not.toBe(
      'error',
    );
    expect((await modelRows(t))!.filter((r) => r[0] === 'rb_m')).toEqual([
      ['rb_m', 1, false, 'complete'],
      ['rb_m', 3, false, 'complete'],
      ['rb_m', 4, true, 'complete'],
    ]);
  });
});
