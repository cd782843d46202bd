import mysql from 'mysql2/promise';
import pg from 'pg';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { BIG_TABLE, freshMariaData, freshPostgresData } from '../support/external';
import { startProxy } from '../support/proxy';
import { until } from '../support/until';

/**
 * A query that stops while it reads from a customer's database (its client left; the server's
 * memory and a shutdown stop it the same way) stops the read: the driver drops the connection, and
 * the database sends no more than what was on its way. Before, only the query stopped: its read
 * went on to the end of the result (up to a read's ceiling, a million rows), the customer's
 * database working and sending for a process that no longer wanted the rows.
 *
 * Told without timing: `big` is 50,000 rows of 1,024 characters (51.2 MB of text); the native
 * query's row 3,000 waits on a lock the test holds, so the read is under way and stalled when the
 * client leaves; the lock is let go once the service has given up, and the bytes the database sent
 * through a proxy in front of it are counted when its session has ended. A read that stopped took
 * the rows before the lock and what was already on its way (the cursor's batch of about 4 MiB on
 * PostgreSQL, the sockets' buffers on MariaDB); one that went on takes the whole table.
 */
const TABLE_TEXT = BIG_TABLE.text;
const LOCK_ROW = 3000;

/**
 * A session of the test's on the customer's database: `take` runs at once (a lock taken);
 * `sessions()` counts the service's sessions `counting` finds; `letGo()` runs `release`.
 */
type Session = { sessions: () => Promise<number>; letGo: () => Promise<void>; close: () => Promise<void> };

const postgresSession = async (
  parameters: Record<string, unknown>,
  take: string[],
  counting: string,
  release: string,
): Promise<Session> => {
  const c = new pg.Client(parameters);
  await c.connect();
  for (const statement of take) await c.query(statement);
  return {
    sessions: async () => {
      // Inside the holder's transaction pg_stat_activity answers the snapshot first read there.
      await c.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await c.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND ${counting}`,
      );
      return Number(rows[0]!.n);
    },
    letGo: async () => void (await c.query(release)),
    close: () => c.end(),
  };
};

const mariaSession = async (
  parameters: Record<string, unknown>,
  take: string,
  counting: string,
  release: string,
): Promise<Session> => {
  const c = await mysql.createConnection({ ...parameters, password: undefined } as mysql.ConnectionOptions);
  await c.query(take);
  return {
    sessions: async () => {
      const [rows] = await c.query(
        `SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND ${counting}`,
      );
      return Number((rows as { n: number }[])[0]!.n);
    },
    letGo: async () => void (await c.query(release)),
    close: () => c.end(),
  };
};

const engines = [
  {
    engine: 'postgres',
    port: 5432,
    data: () => freshPostgresData([...BIG_TABLE.postgres]),
    /** The read: its row LOCK_ROW waits on the advisory lock the test holds. */
    stalled: `SELECT id, name, CASE WHEN id = ${LOCK_ROW} THEN pg_advisory_lock(4242)::text END AS mindledger_read_stop FROM big`,
    /** The advisory lock held: `sessions()` counts the reads running. */
    holder: (parameters: Record<string, unknown>) =>
      postgresSession(
        parameters,
        ['SELECT pg_advisory_lock(4242)'],
        "query LIKE '%pg_advisory_lock(4242)%' AND state = 'active'",
        'SELECT pg_advisory_unlock(4242)',
      ),
    /** `big` locked: a read of it waits before its first row; `sessions()` counts those waiting. */
    tableLock: (parameters: Record<string, unknown>) =>
      postgresSession(
        parameters,
        ['BEGIN', 'LOCK TABLE big IN ACCESS EXCLUSIVE MODE'],
        "wait_event_type = 'Lock' AND query LIKE '%pushed_whole%'",
        'ROLLBACK',
      ),
  },
  {
    engine: 'mariadb',
    port: 3306,
    data: () => freshMariaData([...BIG_TABLE.mariadb]),
    stalled: `SELECT id, name, CASE WHEN id = ${LOCK_ROW} THEN GET_LOCK('mindledger_read_stop', 60) END AS mindledger_read_stop FROM big ORDER BY id`,
    holder: (parameters: Record<string, unknown>) =>
      mariaSession(
        parameters,
        "SELECT GET_LOCK('mindledger_read_stop', 10)",
        "INFO LIKE '%mindledger_read_stop%'",
        "SELECT RELEASE_LOCK('mindledger_read_stop')",
      ),
    tableLock: (parameters: Record<string, unknown>) =>
      mariaSession(
        parameters,
        'LOCK TABLES big WRITE',
        "STATE LIKE '%lock%' AND INFO LIKE '%pushed_whole%'",
        'UNLOCK TABLES',
      ),
  },
] as const;

describe.each(engines)(
  'a query stopped while it reads from a customer database ($engine)',
  ({ engine, port, data, stalled, holder, tableLock }) => {
    let t: TestApp;
    let customer: Awaited<ReturnType<typeof data>>;
    let proxy: Awaited<ReturnType<typeof startProxy>>;

    beforeAll(async () => {
      customer = await data();
      proxy = await startProxy(port);
      t = await startTestApp('sqlite', { SQL_TIMEOUT_MS: '60000' });
      await t.http
        .post('/api/databases')
        .send({
          database: { name: 'cust', engine, parameters: { ...customer.parameters, port: proxy.port } },
        })
        .expect(201);
    });
    /**
     * Asks `query` over HTTP as a client that can leave (`leave`, fetch's AbortController);
     * `answered` says how it ended.
     */
    const asking = (query: string) => {
      const client = new AbortController();
      const answered = fetch(`${t.url}/api/sql/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
        signal: client.signal,
      }).then(
        async (res) => `answered ${res.status} ${await res.text()}`,
        (error: Error) => error.name,
      );
      return { answered, leave: () => client.abort() };
    };

    afterAll(async () => {
      await t.dispose();
      await proxy.down().catch(() => undefined);
      await customer.drop();
    });

    it('given a read stalled half way, when its client leaves, then the database sends no more of the result, and the integration answers after', async () => {
      const lock = await holder(customer.parameters);
      try {
        proxy.resetCount();
        const asked = asking(`SELECT count(*) AS n FROM cust (${stalled})`);
        // Under way: the rows before the lock arrived (a third of them is 1 MB), and it waits.
        await until('the read to be under way', async () =>
          proxy.bytes > 1_000_000 && (await lock.sessions()) === 1 ? true : undefined,
        );
        asked.leave();
        expect(await asked.answered).toBe('AbortError');
        // The service drops its connection while the read still waits on the lock. Without the stop
        // it keeps the connection, reading on once the lock lets go, to the table's end.
        await until('the service to close the connection reading for it', async () =>
          proxy.closedByClientAfterSending('mindledger_read_stop') ? true : undefined,
        );
        await lock.letGo();
        await until('the customer session to end', async () =>
          (await lock.sessions()) === 0 ? true : undefined,
        );
        console.log(
          `${engine}: ${proxy.bytes} bytes from the database, of ${TABLE_TEXT} in the table's text`,
        );
        expect(proxy.bytes).toBeLessThan(TABLE_TEXT / 4);
      } finally {
        await lock.letGo().catch(() => undefined);
        await lock.close();
      }
      // The pool serves the next query.
      expect((await querySql(t, 'SELECT count(*) AS n FROM cust (SELECT id FROM big)')).data).toEqual([
        [50_000],
      ]);
    }, 60_000);

    it('given a query pushed down whole that waits on a lock there, when its client leaves, then the service closes its connection', async () => {
      const lock = await tableLock(customer.parameters);
      try {
        const asked = asking('SELECT id, name AS pushed_whole FROM cust.big');
        await until('the pushed-down query to wait on the lock', async () =>
          (await lock.sessions()) === 1 ? true : undefined,
        );
        asked.leave();
        expect(await asked.answered).toBe('AbortError');
        // Without the stop the service waits on, to read the table once the lock lets go.
        await until('the service to close the connection asking for it', async () =>
          proxy.closedByClientAfterSending('pushed_whole') ? true : undefined,
        );
      } finally {
        await lock.letGo().catch(() => undefined);
        await lock.close();
      }
      expect((await querySql(t, 'SELECT count(*) AS n FROM cust.big')).data).toEqual([[50_000]]);
    }, 60_000);
  },
);
