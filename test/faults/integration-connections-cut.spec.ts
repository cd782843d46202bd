/**
 * A customer's database that cuts our connections (a restart, `pg_terminate_backend`, MariaDB's
 * `KILL`, a firewall): the pools' idle connections die under them. An 'error' no one hears would end
 * the process; here the pool drops them and the next query opens another (issue 63). Kill check:
 * without `survivingDrops` on the PostgreSQL driver's pool, the first case dies of "Unhandled error
 * … terminating connection". mysql2's pool hears its connections' errors itself: the MariaDB case
 * holds that it stays so.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { connect, type ExternalDatabase } from '../../src/integrations/drivers';
import {
  freshMariaData,
  freshPostgresData,
  mariadbParameters,
  postgresParameters,
} from '../support/external';

const OPTIONS = { connectTimeoutMs: 5_000, queryTimeoutMs: 5_000 };

/** Opens the pool's four connections at once, so that each has a backend to cut. */
const openAll = (db: ExternalDatabase, sleep: string) =>
  Promise.all(Array.from({ length: 4 }, () => db.query(sleep)));

describe("an integration's connections cut under its pool", () => {
  it('PostgreSQL: pg_terminate_backend of every connection, then the next query answers', async () => {
    const data = await freshPostgresData(['CREATE TABLE t (n int)', 'INSERT INTO t VALUES (7)']);
    const db = connect('postgres', data.parameters, OPTIONS);
    const admin = new pg.Client(postgresParameters());
    await admin.connect();
    try {
      await openAll(db, 'SELECT pg_sleep(0.05)');
      const { rows } = await admin.query<{ n: number }>(
        'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [data.name],
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
      // The cut connections' errors arrive while idle; give them the time to be heard.
      await new Promise((r) => setTimeout(r, 200));
      expect((await db.query('SELECT n FROM t')).rows).toEqual([[7]]);
    } finally {
      await admin.end();
      await db.close().catch(() => undefined);
      await data.drop();
    }
  });

  it('MariaDB: KILL of every connection, then the next query answers', async () => {
    const data = await freshMariaData(['CREATE TABLE t (n int)', 'INSERT INTO t VALUES (7)']);
    const db = connect('mariadb', data.parameters, OPTIONS);
    const admin = await mysql.createConnection(mariadbParameters());
    try {
      await openAll(db, 'SELECT SLEEP(0.05)');
      const [list] = await admin.query('SELECT id FROM information_schema.processlist WHERE db = ?', [
        data.name,
      ]);
      const ids = (list as { id: number }[]).map((r) => r.id);
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) await admin.query(`KILL ${Number(id)}`);
      await new Promise((r) => setTimeout(r, 200));
      expect((await db.query('SELECT n FROM t')).rows).toEqual([[7]]);
    } finally {
      await admin.end();
      await db.close().catch(() => undefined);
      await data.drop();
    }
  });
});
