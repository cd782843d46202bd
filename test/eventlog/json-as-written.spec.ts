/**
 * Event data reads back as it was written, on both stores. Emmett's PostgreSQL driver sets pg's JSON
 * parsers, process-wide, to turn integers past 2^53 and long numeric strings into BigInt: a skill
 * whose params held 1e20 stopped the read model on PostgreSQL ("Do not know how to serialize a
 * BigInt", found by test/hardening/fuzz.property.spec.ts at seed 2015165594).
 */
import { startTestApp, storeKinds, type TestApp } from '../support/app';

const PARAMS = {
  database: 'files',
  huge: 1e20,
  negative: -1.1195061168347325e167,
  digits: '12345678901234567890',
  signed: '-98765432109876543210',
  safe: 9007199254740991,
};

describe.each(storeKinds)('event data as written (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t.dispose());

  it('given a skill whose params hold huge integers and long digit strings, then the log, the tables and the answer keep them as sent', async () => {
    const created = await t.http
      .post('/api/projects/mindsdb/skills')
      .send({ skill: { name: 'numbers', type: 'text2sql', params: PARAMS } })
      .expect(201);
    expect(created.body.params).toEqual(PARAMS);

    const [event] = (await t.running.ctx.log.readPage({ after: 0n, limit: 100 })).filter(
      (e) => e.type === 'SkillCreated',
    );
    expect(event?.data).toMatchObject({ params: PARAMS });
    const { events } = await t.running.ctx.log.readStream('project-mindsdb', 0n);
    expect(events.find((e) => e.type === 'SkillCreated')?.data).toMatchObject({ params: PARAMS });

    // The read model applied it (it would stop at an event it cannot project) and serves it.
    const read = await t.http.get('/api/projects/mindsdb/skills/numbers').expect(200);
    expect(read.body.params).toEqual(PARAMS);
    expect(t.running.ctx.projections.failure).toBeNull();
    const logged = await t.http
      .post('/api/sql/query')
      .send({ query: "SELECT data FROM information_schema.events WHERE type = 'SkillCreated'" })
      .expect(200);
    expect(JSON.parse(String(logged.body.data[0][0]))).toMatchObject({ params: PARAMS });
  });
});
