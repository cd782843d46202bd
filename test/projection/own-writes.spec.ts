import { OwnWrites } from '../../src/projection/ownWrites';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';

/** The positions in order (a read waits for all of them, in any order). */
const sorted = (positions: bigint[]) => [...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('writes answered ahead: which reads wait for them', () => {
  const given = () => {
    const own = new OwnWrites();
    own.note(10n, new Set(['projects', 'events']));
    own.note(11n, 'all');
    own.note(12n, new Set(['skills', 'events']));
    return own;
  };

  it('given writes changing named tables and one changing tables unknown by name, when a read names its tables, then it waits for those changing them and for the unknown', () => {
    const own = given();
    expect(sorted(own.blocking(['databases']))).toEqual([11n]);
    expect(sorted(own.blocking(['projects']))).toEqual([10n, 11n]);
    expect(sorted(own.blocking(['skills', 'projects']))).toEqual([10n, 11n, 12n]);
  });

  it('given the same writes, when a read cannot name its tables, then it waits for every one', () => {
    expect(sorted(given().blocking('all'))).toEqual([10n, 11n, 12n]);
  });

  it('given writes, when the runner applies them, then no read waits for them any more', () => {
    const own = given();
    own.applied(11n);
    expect(own.blocking(['databases'])).toEqual([]);
    own.applied(10n);
    own.applied(12n);
    expect(own.size).toBe(0);
    expect(own.blocking('all')).toEqual([]);
  });
});

const READ_WAIT_MS = 3_000;

describe.each(storeKinds)('a project create checks the integrations alone (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    // Reads wait this long for the held delete before 503: the create below must not sit it out
    // (long enough that a loaded machine's slow POST is not taken for a wait).
    t = await startTestApp(kind, { READ_MIN_POSITION_WAIT_MS: String(READ_WAIT_MS) });
  });
  afterAll(() => t.dispose());

  it('given a held read model behind a project delete and cold caches, when another project is created, then 201 at once; reads of projects wait', async () => {
    await t.http.post('/api/projects').send({ name: 'gone_soon' }).expect(201);
    await t.http.get('/api/projects/gone_soon').expect(200);
    // A new process: every read cache is cold.
    t = await t.restart();
    const held = t.running.ctx.projections.hold();
    try {
      await t.http.delete('/api/projects/gone_soon').expect(204);
      // Its namespace check read the integrations' names alone, not waiting for the delete (which
      // the held runner cannot apply: a wait would have lasted READ_WAIT_MS and answered 503, so
      // the 201 is the proof, whatever the machine's speed).
      const created = await t.http.post('/api/projects').send({ name: 'made_meanwhile' }).expect(201);
      expect(created.body).toMatchObject({ name: 'made_meanwhile' });
      expect(problemOf(await t.http.get('/api/projects').expect(503)).title).toBe('Read model behind');
    } finally {
      held.release();
    }
    const names = ((await t.http.get('/api/projects').expect(200)).body as { name: string }[]).map(
      (p) => p.name,
    );
    expect(names).toContain('made_meanwhile');
    expect(names).not.toContain('gone_soon');
  });
});

/** The pause between batches in these specs: far longer than anything they do takes. */
const PAUSE_MS = 10_000;

describe.each(storeKinds)('the pause between batches nobody waits for (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    // A long pause, so that what happens during it does not depend on the machine's speed (three
    // POSTs took past 2 s on a machine at load 19); no background polls (chat messages, jobs,
    // triggers), whose reads would end it.
    t = await startTestApp(kind, {
      PROJECTION_BATCH_PAUSE_MS: String(PAUSE_MS),
      CHATBOT_POLL_MS: '600000',
      JOBS_POLL_MS: '0',
      TRIGGERS_POLL_MS: '0',
    });
  });
  afterAll(() => t.dispose());

  const batchWritten = async (after: number) => {
    while (t.running.ctx.projections.version === after) await new Promise((r) => setTimeout(r, 2));
  };

  it('given a batch just written, when writes answered ahead follow, then they wait for the pause together; a read ends it at once and finds them in one batch', async () => {
    const before = t.running.ctx.projections.version;
    await t.http.post('/api/projects').send({ name: 'first_of_all' }).expect(201);
    await batchWritten(before);
    const afterFirst = t.running.ctx.projections.version;

    for (const name of ['joins_a', 'joins_b', 'joins_c'])
      await t.http.post('/api/projects').send({ name }).expect(201);
    expect(t.running.ctx.projections.version).toBe(afterFirst);

    const started = Date.now();
    const names = ((await t.http.get('/api/projects').expect(200)).body as { name: string }[]).map(
      (p) => p.name,
    );
    // Ended by the read, not by the pause running out.
    expect(Date.now() - started).toBeLessThan(PAUSE_MS / 2);
    expect(names).toEqual(expect.arrayContaining(['first_of_all', 'joins_a', 'joins_b', 'joins_c']));
    expect(t.running.ctx.projections.version).toBe(afterFirst + 1);
  });

  it('given a wait for a write while more writes arrive, when its batch is written, then the writes after it wait for the pause again (one wait does not end the pauses for good)', async () => {
    const runner = t.running.ctx.projections;
    const held = runner.hold();
    const written = await t.http.post('/api/projects').send({ name: 'waited_for' }).expect(201);
    // Someone waits for that write (a read after it, a writer waiting for its row): the runner
    // reads it at once and stops at the hold, with that write in hand (a fixed sleep for this was
    // too short at load 11, and the read then found the later writes in the same batch).
    const waiting = runner.waitFor(BigInt(String(written.headers['x-log-position'])));
    await held.reached;
    // Appended after the runner's read: under steady writes there is always more.
    for (const name of ['after_wait_a', 'after_wait_b'])
      await t.http.post('/api/projects').send({ name }).expect(201);
    const beforeRelease = runner.version;
    held.release();
    await waiting;
    expect(runner.version).toBe(beforeRelease + 1);

    // Nobody waits now: the two writes after it are in no batch yet, however long we look.
    await new Promise((r) => setTimeout(r, 400));
    expect(runner.version).toBe(beforeRelease + 1);

    // A read ends the pause and finds both in one batch.
    const names = ((await t.http.get('/api/projects').expect(200)).body as { name: string }[]).map(
      (p) => p.name,
    );
    expect(names).toEqual(expect.arrayContaining(['waited_for', 'after_wait_a', 'after_wait_b']));
    expect(runner.version).toBe(beforeRelease + 2);
  });
});
