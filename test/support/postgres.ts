import crypto from 'node:crypto';
import pg from 'pg';

export const POSTGRES_ADMIN_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A brand-new PostgreSQL database for one test, dropped by the returned function. */
export const freshPostgresDatabase = async (): Promise<{ url: string; drop: () => Promise<void> }> => {
  const name = `mindledger_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      try {
        // Closed pools finish hanging up asynchronously; forcing the drop while a client is still
        // ending makes it emit an error nobody listens to any more.
        for (let i = 0; i < 50; i++) {
          const { rows } = await c.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
            [name],
          );
          if (Number(rows[0]?.n ?? 0) === 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
};
