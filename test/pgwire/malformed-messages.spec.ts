/**
 * A message framed right whose fields cannot be read — a NUL inside a query's text, which a driver
 * sends as it was given — is answered as PostgreSQL answers it: ERROR 08P01, and the connection goes
 * on. (It was FATAL: one hostile string ended the client's connection.) Each case is sent to the
 * real PostgreSQL server too, so the door is held to what PostgreSQL does.
 */
import pg from 'pg';
import { POSTGRES_ADMIN_URL } from '../support/postgres';
import { startPgFront, type PgFront } from './support';

type PgFailure = { code?: string; severity?: string };

/** What a client sees: the query's answer or error, then whether the connection still answers. */
const attempt = async (client: pg.Client, query: pg.QueryConfig) => {
  const first = await client.query(query).then(
    (r) => ({ rows: r.rows as unknown[] }),
    (e: PgFailure) => ({ code: e.code, severity: e.severity }),
  );
  const after = await client.query('SELECT 1 AS one').then(
    (r) => r.rows as unknown[],
    (e: Error) => e.message,
  );
  return { first, after };
};

describe('a message whose fields cannot be read', () => {
  let front: PgFront;
  const real: pg.Client[] = [];
  beforeAll(async () => {
    front = await startPgFront();
  });
  afterAll(async () => {
    for (const c of real) await c.end().catch(() => undefined);
    await front.dispose();
  });

  const realPostgres = async () => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    client.on('error', () => undefined);
    real.push(client);
    await client.connect();
    return client;
  };

  it.each([
    ['a simple query with a NUL inside its text', { text: "SELECT 'a\u0000b' AS x" }],
    [
      'a parsed query with a NUL inside its text',
      { text: "SELECT 'a\u0000b' AS x WHERE $1 = 1", values: [1] },
    ],
  ])(
    'given %s, then ERROR 08P01 and the connection answers the next query, as PostgreSQL does',
    async (_, query) => {
      const door = await attempt(await front.connect(), query);
      expect(door).toEqual({
        first: { code: '08P01', severity: 'ERROR' },
        after: [{ one: 1 }],
      });
      expect(await attempt(await realPostgres(), query)).toEqual(door);
    },
  );

  it('given a NUL in a query between two good ones on one connection, then only that one fails', async () => {
    const client = await front.connect();
    expect((await client.query("SELECT 'before' AS x")).rows).toEqual([{ x: 'before' }]);
    await expect(client.query("SELECT 'a\u0000b' AS x")).rejects.toMatchObject({ code: '08P01' });
    expect((await client.query("SELECT 'after' AS x")).rows).toEqual([{ x: 'after' }]);
  });
});
