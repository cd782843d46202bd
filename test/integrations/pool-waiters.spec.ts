/**
 * Calls that give up while waiting for a free connection of an integration's pool: when a
 * connection is finally handed to them it was never used, so it goes back to the pool whole. Before,
 * each such call destroyed the connection it was handed, so a burst of calls that expired in the
 * queue (mysql2's pool keeps its waiters without limit) cost the customer's database a connection
 * closed and, at the next call, opened again. Here: four calls hold the pool's four connections
 * for 2 s, three more give up after 200 ms in the queue; afterwards the pool still answers on the
 * same four server connections.
 */
import { connect, POOL_SLOTS, type ExternalDatabase } from '../../src/integrations/drivers';
import { freshMariaData, freshPostgresData } from '../support/external';

const OPTIONS = { connectTimeoutMs: 5_000, queryTimeoutMs: 5_000 };
const WAITERS = 3;

/** The server connections `POOL_SLOTS` calls held at once ran on, each holding its own for `seconds`. */
const connectionsOf = async (db: ExternalDatabase, holding: (seconds: number) => string, seconds: number) =>
  new Set(
    (await Promise.all(Array.from({ length: POOL_SLOTS }, () => db.query(holding(seconds))))).map((r) =>
      String(r.rows[0]![0]),
    ),
  );

const cases = [
  {
    engine: 'postgres',
    data: () => freshPostgresData([]),
    holding: (seconds: number) => `SELECT pg_backend_pid(), pg_sleep(${seconds})`,
  },
  {
    engine: 'mariadb',
    data: () => freshMariaData([]),
    holding: (seconds: number) => `SELECT CONNECTION_ID(), SLEEP(${seconds})`,
  },
] as const;

describe("calls that give up waiting for an integration's connection", () => {
  it.each(cases)(
    '$engine: the connections handed to them afterwards go back to the pool, none closed',
    async ({ engine, data: makeData, holding }) => {
      const data = await makeData();
      const db = connect(engine, data.parameters, OPTIONS);
      try {
        const held = connectionsOf(db, holding, 2);
        // Queued behind the four: each gives up after 200 ms, long before a connection is free.
        const waiters = await Promise.allSettled(
          Array.from({ length: WAITERS }, () => db.query('SELECT 1', [], { timeoutMs: 200 })),
        );
        for (const w of waiters) {
          expect(w.status).toBe('rejected');
          expect(String((w as PromiseRejectedResult).reason)).toMatch(/did not answer within 200 ms/);
        }
        const first = await held;
        expect(first.size).toBe(POOL_SLOTS);
        // The pool handed the freed connections to the calls that gave up; then asked again, it
        // answers on the same four.
        await new Promise((r) => setTimeout(r, 100));
        expect(await connectionsOf(db, holding, 0.2)).toEqual(first);
      } finally {
        await db.close().catch(() => undefined);
        await data.drop();
      }
    },
    30_000,
  );
});
