/**
 * A read of the log that failed (a database restarting) stops the read model until a read succeeds,
 * and a read that succeeds with nothing new to apply is recovery too. It was not: only a batch
 * applied cleared the failure, so a node with nothing left to read stayed "stopped", refusing
 * writes; two nodes on one PostgreSQL log, each refusing, waited for each other's writes after
 * PostgreSQL came back (issue 63; the restart fault in test/faults/postgres-restart.spec.ts).
 */
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { until } from '../support/until';

describe.each(storeKinds)('a failed read of the log, then nothing new (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.dispose());

  it('given the read model caught up, when one read of the log fails and the next finds nothing new, then the read model is no longer stopped and writes are taken', async () => {
    await t.http.post('/api/projects').send({ name: 'before_the_outage' }).expect(201);
    const { log, projections } = t.running.ctx;
    const readAll = log.readAll.bind(log);
    log.readAll = () =>
      Promise.reject(
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      );
    await expect(projections.catchUp()).rejects.toThrow(/ECONNREFUSED/);
    expect(projections.failure).toMatchObject({
      position: null,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    // The log is back; nothing was appended meanwhile.
    log.readAll = readAll;
    await until(
      'the read model no longer stopped',
      () => Promise.resolve(projections.failure === null ? true : undefined),
      10_000,
    );
    await t.http.post('/api/projects').send({ name: 'after_the_outage' }).expect(201);
    const names = ((await t.http.get('/api/projects').expect(200)).body as { name: string }[]).map(
      (p) => p.name,
    );
    expect(names).toEqual(expect.arrayContaining(['before_the_outage', 'after_the_outage']));
  });
});
