import { digestReadModel } from '../../src/projection/digest';
import { CHECKPOINT_TABLE } from '../../src/projection/runner';
import { FILES_SCHEMA } from '../../src/shared/names';
import { sharedData } from '../support/data';
import { querySql, startTestApp, storeKinds, type StoreKind, type TestApp } from '../support/app';

const HOME_RENTALS = sharedData('home_rentals.csv');

const modelRows = async (t: TestApp) =>
  (await querySql(t, 'SELECT name, version, active, status FROM mindsdb.models ORDER BY name, version')).data;

const digestOf = (t: TestApp) =>
  t.running.ctx.duck.withReader((c) =>
    digestReadModel(c, { checkpointTable: CHECKPOINT_TABLE, schemas: ['main', FILES_SCHEMA] }),
  );

const FROM =
  'FROM files (SELECT * FROM home_rentals LIMIT 300) PREDICT rental_price USING join_learn_process = true';

const run = async (t: TestApp, query: string) => {
  const answer = await querySql(t, query);
  expect(answer.type).not.toBe('error');
};

/** An app of the test's own (the test restarts it), small batches, with the home_rentals file. */
const givenApp = async (kind: StoreKind) => {
  const t = await startTestApp(kind, { PROJECTION_BATCH_SIZE: '1' });
  await t.http.put('/api/files/home_rentals').attach('file', HOME_RENTALS).expect(200);
  return t;
};

/** Model rb_m trained, retrained twice and its version 2 dropped: versions 1 and 3, 3 active. */
const givenModelWithDroppedVersion = async (t: TestApp) => {
  await run(t, `CREATE MODEL mindsdb.rb_m ${FROM}`);
  await run(t, 'RETRAIN mindsdb.rb_m USING join_learn_process = true');
  await run(t, 'RETRAIN mindsdb.rb_m USING join_learn_process = true');
  await run(t, 'DROP MODEL mindsdb.rb_m.2');
};

/**
 * Issue 9, first reproduction: a model's history (retrains, a dropped version, more models) rebuilt
 * from the log with the default batch size must equal what the live process shows.
 */
describe.each(storeKinds)('a rebuilt read model equals the live one: model histories (%s)', (kind) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
    t = undefined;
  });

  it('given retrains and a dropped version, when rebuilt with every batch size, then models and digests match', async () => {
    t = await givenApp(kind);
    await givenModelWithDroppedVersion(t);
    await run(t, `CREATE MODEL mindsdb.rb_other ${FROM}`);
    await run(t, `CREATE MODEL mindsdb.rb_third ${FROM}`);
    await t.running.services.models.idle();
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
  }, 120_000);

  it('given the rebuilt model, when retrained, then the next version is 4 (no second version 2)', async () => {
    t = await givenApp(kind);
    await givenModelWithDroppedVersion(t);
    await t.running.services.models.idle();
    t = await t.restart({ DUCKDB_FILE: ':memory:', PROJECTION_BATCH_SIZE: '1000' });

    expect((await querySql(t, 'RETRAIN mindsdb.rb_m USING join_learn_process = true')).type).not.toBe(
      'error',
    );

    expect((await modelRows(t))!.filter((r) => r[0] === 'rb_m')).toEqual([
      ['rb_m', 1, false, 'complete'],
      ['rb_m', 3, false, 'complete'],
      ['rb_m', 4, true, 'complete'],
    ]);
  }, 120_000);
});
