import pg from 'pg';
import { startPostgresCluster, type TestApp } from '../support/app';

/**
 * Processes on one PostgreSQL log hear of each other's commits (LISTEN/NOTIFY) instead of waiting
 * for the next poll. Polling is an hour here, so whatever B learns, it learned from the news.
 */
const NO_POLLING = { PROJECTION_POLL_MS: '3600000' };
/**
 * How long a test waits for B to hear: far inside the hour a poll would take, and far past what a
 * loaded machine adds to the news (so the figure, printed, is not asserted).
 */
const HEARS_WITHIN_MS = 20_000;

/** Resolves once `node`'s read model includes `position` on its own (waitFor would catch it up itself). */
const seenBy = async (node: TestApp, position: bigint, timeoutMs: number) => {
  const started = Date.now();
  while (node.running.ctx.projections.highestApplied < position) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`position ${position} not seen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Date.now() - started;
};

describe('log news on PostgreSQL: a process learns of another one’s commits at once', () => {
  let cluster: Awaited<ReturnType<typeof startPostgresCluster>>;
  let a: TestApp;
  let b: TestApp;
  let admin: pg.Client;
  const listeners = async () =>
    (
      await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN %'`,
      )
    ).rows.map((r) => r.pid);

  beforeAll(async () => {
    cluster = await startPostgresCluster(2, { env: NO_POLLING });
    [a, b] = cluster.apps as [TestApp, TestApp];
    admin = new pg.Client({ connectionString: a.config.eventStoreUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
    await cluster.dispose();
  });

  const write = async (name: string) =>
    BigInt((await a.http.post('/api/projects').send({ name }).expect(201)).headers['x-log-position']!);

  it('given a write on A, when it commits, then B applies it well within a poll interval', async () => {
    const took: number[] = [];
    for (let i = 0; i < 20; i++) took.push(await seenBy(b, await write(`news_${i}`), HEARS_WITHIN_MS));
    console.log(`B applied each of 20 writes ${took.join('/')} ms after it committed`);
  });

  it('given the announcing trigger, the tail index and one listening connection per process, when inspected, then there are exactly those', async () => {
    const triggers = await admin.query(
      `SELECT tgname FROM pg_trigger WHERE tgrelid = 'emt_messages'::regclass AND NOT tgisinternal`,
    );
    expect(triggers.rows).toEqual([{ tgname: 'mindledger_announce_appended' }]);
    const index = await admin.query(`SELECT to_regclass('mindledger_messages_tail')::text AS found`);
    expect(index.rows).toEqual([{ found: 'mindledger_messages_tail' }]);
    expect(await listeners()).toHaveLength(2);
  });

  it('given the listening connections killed, when A writes meanwhile, then B reconnects and catches up', async () => {
    for (const pid of await listeners()) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    const position = await write('while_deaf');
    await seenBy(b, position, HEARS_WITHIN_MS);
    // Listening again: later writes arrive by news.
    const deadline = Date.now() + HEARS_WITHIN_MS;
    while ((await listeners()).length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(await listeners()).toHaveLength(2);
    await seenBy(b, await write('heard_again'), HEARS_WITHIN_MS);
  });

  it('given an older transaction open elsewhere, when A commits behind it, then B applies it soon after that transaction ends', async () => {
    // The tailer reads only behind every running transaction: A's commit is announced before it is
    // readable, so B must look again rather than wait for its next poll.
    const blocker = new pg.Client({ connectionString: a.config.eventStoreUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT pg_current_xact_id()');
      // Sent now (supertest sends on then), answered once A's read model has it.
      const writing = a.http
        .post('/api/projects')
        .send({ name: 'behind_blocker' })
        .then((res) => res);
      // Long enough for A's append to commit, and be announced, behind the open transaction.
      await new Promise((r) => setTimeout(r, 300));
      await blocker.query('COMMIT');
      const position = BigInt((await writing).headers['x-log-position']!);
      await seenBy(b, position, HEARS_WITHIN_MS);
    } finally {
      await blocker.end();
    }
  });
});
