/**
 * A SQL query waiting on something outside the process (an LLM provider answering LLM(), an
 * integration's rows being copied in) held its pooled reader and one of the SQL share's slots the
 * whole time, using neither: as many slow LLM() calls (or reads of a locked customer table) as the
 * share has slots made every other SQL query wait DUCKDB_ACQUIRE_TIMEOUT_MS and answer "server
 * busy" (1040). While it waits outside, a query now gives its slot back and its connection stops
 * counting among the readers (`Duck.waitingOutside`), up to SQL_MAX_WAITING_OUTSIDE such queries.
 * No clock in the assertions: the other query must answer while the held ones provably still wait.
 */
import pg from 'pg';
import { loadConfig } from '../../src/config';
import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { freshPostgresData } from '../support/external';
import { fakeReply, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { until } from '../support/until';
import { rowsOf } from '../llmModels/world';

/** The SQL share's slots (SQL_MAX_CONCURRENT), and the queries that may copy integrations' rows at once. */
const SLOTS = 2;
/** The queries that may wait outside at once (SQL_MAX_WAITING_OUTSIDE). */
const OUTSIDE = SLOTS + 1;

/** Starts `work`, noting when it has settled, and with what. */
const tracked = <T>(work: Promise<T>) => {
  const state: { settled: boolean; result?: T; answer: Promise<T> } = {
    settled: false,
    answer: work.then((result) => {
      state.settled = true;
      state.result = result;
      return result;
    }),
  };
  return state;
};

/**
 * Waits until `arrived` says every held query reached the outside service; a held query that
 * answered first (it never got there: no reader, no slot) fails the wait with its answer.
 */
const untilAllOutside = (held: ReturnType<typeof tracked>[], what: string, arrived: () => Promise<boolean>) =>
  until(what, async () => {
    const early = held.find((h) => h.settled);
    if (early) throw new Error(`a held query answered before ${what}: ${JSON.stringify(early.result)}`);
    return (await arrived()) ? true : undefined;
  });

/** The provider holds every reply until the returned function is called. */
const holdReplies = (fake: FakeOpenAi) => {
  let letGo: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  fake.reset();
  fake.setFallback((body) => fakeReply.text(`answer: ${lastUserText(body)}`, { heldUntil: held }));
  return letGo;
};

/** The pool once every query is over: no reader lent, none outside, no SQL slot or turn held. */
const expectPoolIdle = (t: TestApp) =>
  until('the reader pool idle', async () => {
    const use = t.running.ctx.duck.readerUse();
    return use.lent === 0 && use.outside === 0 && use.rowsOutside === 0 && use.sqlSlots === 0
      ? use
      : undefined;
  });

describe.each(storeKinds)('SQL queries waiting outside the process (%s)', (kind) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let customer: Awaited<ReturnType<typeof freshPostgresData>>;
  let watcher: pg.Client;
  let probes = 0;

  /**
   * Two reads at once, each of a text not asked before (no cached answer), answered from DuckDB: a
   * count, and the project databases as the SQL endpoint lists them.
   */
  const expectLocalAnswer = async () => {
    const n = ++probes;
    const [count, databases] = await Promise.all([
      querySql(t, `SELECT count(*) AS n FROM range(${n + 4}) WHERE ${n} > 0`),
      querySql(t, `SELECT name FROM information_schema.databases WHERE name = 'mindsdb' AND ${n} > 0`),
    ]);
    expect(count).toMatchObject({ type: 'table', data: [[n + 4]] });
    expect(databases).toMatchObject({ type: 'table', data: [['mindsdb']] });
  };

  /**
   * `count` LLM() queries, `${label} i`, each once it has reached the provider, which holds their
   * replies until `letGo` is called.
   */
  const heldLlmQueries = async (count: number, label: string) => {
    const letGo = holdReplies(fake);
    const held = Array.from({ length: count }, (_, i) =>
      tracked(querySql(t, `SELECT LLM('${label} ${i}') AS said`)),
    );
    try {
      await untilAllOutside(
        held,
        'every held query asking the provider',
        async () => fake.chatRequests().length >= count,
      );
    } catch (error) {
      letGo();
      throw error;
    }
    return { held, letGo };
  };

  /** The reads of the customer's table waiting for its lock there (pg_stat_activity). */
  const lockedReads = async () => {
    const { rows } = await watcher.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE '%FROM items%'`,
      [customer.name],
    );
    return Number(rows[0]!.n);
  };

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    customer = await freshPostgresData([
      'CREATE TABLE items (id int)',
      'INSERT INTO items VALUES (1), (2), (3)',
    ]);
    watcher = new pg.Client(customer.parameters);
    await watcher.connect();
    t = await startTestApp(kind, {
      // Every reader held by the queries that wait: the local query's own needs one made beside them.
      DUCKDB_READERS: String(SLOTS),
      SQL_MAX_CONCURRENT: String(SLOTS),
      SQL_MAX_WAITING_OUTSIDE: String(OUTSIDE),
      // Past it, the old code answered "busy": the held queries hold the share for much longer.
      DUCKDB_ACQUIRE_TIMEOUT_MS: '1000',
      SQL_TIMEOUT_MS: '120000',
      LLM_FUNCTION_BASE_URL: fake.baseUrl,
      LLM_FUNCTION_MODEL_NAME: 'fn-model',
    });
    expect(
      await querySql(
        t,
        `CREATE DATABASE shop WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(customer.parameters)}`,
      ),
    ).toMatchObject({ type: 'ok' });
  });
  afterAll(async () => {
    await t?.dispose();
    await watcher?.end();
    await fake?.close();
    await customer?.drop();
  });

  it('given as many LLM() queries as SQL slots, held by the provider, then a local query answers while they wait, and each answers its own prompt once let go', async () => {
    const { held, letGo } = await heldLlmQueries(SLOTS, 'held');
    try {
      await expectLocalAnswer();
      expect(held.map((h) => h.settled)).toEqual(Array(SLOTS).fill(false));
      expect(fake.chatRequests()).toHaveLength(SLOTS);
    } finally {
      letGo();
    }
    const answers: SqlAnswer[] = await Promise.all(held.map((h) => h.answer));
    answers.forEach((a, i) => expect(rowsOf(a)).toEqual([{ said: `answer: held ${i}` }]));
    await expectPoolIdle(t);
  });

  it('given as many reads of an integration table as SQL slots, held by a lock in the customer database, then a local query answers while they wait, and each answers its rows once the lock goes', async () => {
    const native = (i: number) => `SELECT * FROM shop (SELECT id, ${i} AS q FROM items ORDER BY id)`;
    // The integration's connections made and its table read once, before the lock.
    expect(rowsOf(await querySql(t, native(99)))).toEqual([
      { id: 1, q: 99 },
      { id: 2, q: 99 },
      { id: 3, q: 99 },
    ]);
    const locker = new pg.Client(customer.parameters);
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE items IN ACCESS EXCLUSIVE MODE');
      const held = Array.from({ length: SLOTS }, (_, i) => tracked(querySql(t, native(i))));
      await untilAllOutside(
        held,
        'every held read waiting for the lock',
        async () => (await lockedReads()) >= SLOTS,
      );

      await expectLocalAnswer();
      expect(held.map((h) => h.settled)).toEqual(Array(SLOTS).fill(false));
      // Rows copied in wait in the heap until loaded: no more such reads at once than the SQL
      // share has slots. A third waits its turn outside (holding no slot), never reaching the
      // customer's database meanwhile, and reads once a turn comes back.
      const third = tracked(querySql(t, native(SLOTS)));
      await untilAllOutside([third], 'the third read waiting for its turn', async () => {
        const use = t.running.ctx.duck.readerUse();
        return use.outside === SLOTS + 1 && use.rowsOutside === SLOTS;
      });
      await expectLocalAnswer();
      expect(await lockedReads()).toBe(SLOTS);
      expect([...held, third].map((h) => h.settled)).toEqual(Array(SLOTS + 1).fill(false));

      await locker.query('COMMIT');
      const answers: SqlAnswer[] = await Promise.all([...held, third].map((h) => h.answer));
      answers.forEach((a, i) =>
        expect(rowsOf(a)).toEqual([
          { id: 1, q: i },
          { id: 2, q: i },
          { id: 3, q: i },
        ]),
      );
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    await expectPoolIdle(t);
  });

  it('given SQL_MAX_WAITING_OUTSIDE queries waiting outside, then one more that would is busy (1040) naming the setting, before it asks, while local queries still answer', async () => {
    const { held, letGo } = await heldLlmQueries(OUTSIDE, 'capped');
    try {
      const past = await querySql(t, `SELECT LLM('one too many') AS said`);
      expect(past).toMatchObject({ type: 'error', error_code: 1040 });
      expect(past.error_message).toMatch(
        /3 queries already wait on services outside.*SQL_MAX_WAITING_OUTSIDE/,
      );
      expect(fake.chatRequests().map(lastUserText)).not.toContain('one too many');
      await expectLocalAnswer();
      expect(held.map((h) => h.settled)).toEqual(Array(OUTSIDE).fill(false));
    } finally {
      letGo();
    }
    const answers: SqlAnswer[] = await Promise.all(held.map((h) => h.answer));
    answers.forEach((a, i) => expect(rowsOf(a)).toEqual([{ said: `answer: capped ${i}` }]));
    await expectPoolIdle(t);
  });
});

describe('a query waiting outside when the readers stop', () => {
  let t: TestApp;
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
    t = await startTestApp('sqlite', {
      DUCKDB_READERS: '3',
      SQL_MAX_CONCURRENT: String(SLOTS),
      SQL_TIMEOUT_MS: '120000',
      LLM_FUNCTION_BASE_URL: fake.baseUrl,
      LLM_FUNCTION_MODEL_NAME: 'fn-model',
    });
  });
  afterAll(async () => {
    await t?.dispose();
    await fake?.close();
  });

  it('given an LLM() query held by the provider, when the readers stop and the provider answers, then it answers "shutting down" and its reader, slot and place outside are all given back', async () => {
    const letGo = holdReplies(fake);
    const query = querySql(t, `SELECT LLM('at the stop') AS said`);
    try {
      await until('the query asking the provider', async () =>
        fake.chatRequests().length >= 1 ? true : undefined,
      );
      expect(t.running.ctx.duck.readerUse()).toMatchObject({ outside: 1, sqlSlots: 0 });
      t.running.ctx.duck.stop();
    } finally {
      letGo();
    }
    expect(await query).toMatchObject({
      type: 'error',
      error_message: expect.stringMatching(/shutting down/),
    });
    await expectPoolIdle(t);
  });
});

describe('SQL_MAX_WAITING_OUTSIDE', () => {
  it('is optional (four times the SQL share) and at least 1', () => {
    expect(loadConfig({}).sqlMaxWaitingOutside).toBeUndefined();
    expect(loadConfig({ SQL_MAX_WAITING_OUTSIDE: '3' }).sqlMaxWaitingOutside).toBe(3);
    expect(() => loadConfig({ SQL_MAX_WAITING_OUTSIDE: '0' })).toThrow(/SQL_MAX_WAITING_OUTSIDE/);
  });
});
