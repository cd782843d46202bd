import crypto from 'node:crypto';
import pg from 'pg';
import type { ProjectCreated } from '../../events';
import { contractOf } from '../../src/eventlog/registry';

export const POSTGRES_ADMIN_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Databases a spec has given back, emptied, for the next spec to take: `mindledger_pool_<hex>`.
 *
 * Why not CREATE and DROP each time: a new database is some 600 files in the server's data
 * directory, and on ext4 creating files while many were deleted in the last half minute slows to a
 * crawl (the inode allocator skips recently deleted inodes one by one: `recently_deleted`,
 * `find_inode_bit` in a profile). CREATE DATABASE took 20 ms on a quiet server and 280 ms while the
 * suite ran, about 500 times per run. An emptied database has only its own tables to make again.
 */
const POOL_PREFIX = 'mindledger_pool_';
const TEST_PREFIX = 'mindledger_test_';
const randomName = (prefix: string) => `${prefix}${crypto.randomBytes(6).toString('hex')}`;

const withAdmin = async <T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
};

const urlOf = (name: string) => {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

/** The pooled databases on the server, by name. */
const pooledNames = async (admin: pg.Client) =>
  (
    await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, [
      POOL_PREFIX,
    ])
  ).rows.map((r) => r.datname);

/**
 * Takes a pooled database by renaming it to `name`: a rename is atomic, so of two specs (or two
 * suites) reaching for the same one, one gets it and the other tries the next. False when none is
 * left.
 */
const takePooled = async (admin: pg.Client, name: string): Promise<boolean> => {
  for (const datname of await pooledNames(admin)) {
    try {
      await admin.query(`ALTER DATABASE ${datname} RENAME TO ${name}`);
      return true;
    } catch {
      // Taken (or being dropped) by someone else meanwhile.
    }
  }
  return false;
};

/**
 * Empties a database to what CREATE DATABASE makes from template1: every schema but the system's
 * goes, with all it holds, and `public` is made again as PostgreSQL 15 makes it.
 */
const emptied = (c: pg.Client) =>
  c.query(`DO $$
    DECLARE s text;
    BEGIN
      FOR s IN SELECT nspname FROM pg_namespace
               WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' LOOP
        EXECUTE format('DROP SCHEMA %I CASCADE', s);
      END LOOP;
      CREATE SCHEMA public AUTHORIZATION pg_database_owner;
      GRANT USAGE ON SCHEMA public TO PUBLIC;
      COMMENT ON SCHEMA public IS 'standard public schema';
    END $$`);

/** Waits (up to a second) for the clients of `name` to finish hanging up: closed pools end asynchronously. */
const hungUp = async (admin: pg.Client, name: string) => {
  for (let i = 0; i < 50; i++) {
    const { rows } = await admin.query<{ n: string }>(
      'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
      [name],
    );
    if (Number(rows[0]?.n ?? 0) === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** Gives `name` back to the pool, emptied; drops it when that cannot be done cleanly. */
const giveBack = async (admin: pg.Client, name: string) => {
  try {
    // Whatever a spec left connected (an app not closed) would hold locks the emptying waits for.
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    await hungUp(admin, name);
    await withAdmin(urlOf(name), emptied);
    await hungUp(admin, name);
    await admin.query(`ALTER DATABASE ${name} RENAME TO ${randomName(POOL_PREFIX)}`);
  } catch {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
};

/** An empty PostgreSQL database of its own for one test, given back (emptied) by the returned function. */
export const freshPostgresDatabase = async (): Promise<{
  name: string;
  url: string;
  drop: () => Promise<void>;
}> => {
  const name = randomName(TEST_PREFIX);
  await withAdmin(POSTGRES_ADMIN_URL, async (admin) => {
    if (!(await takePooled(admin, name))) await admin.query(`CREATE DATABASE ${name}`);
  });
  return {
    name,
    url: urlOf(name),
    drop: () =>
      withAdmin(POSTGRES_ADMIN_URL, async (admin) => {
        // Closed pools finish hanging up asynchronously; forcing them off while a client is still
        // ending makes it emit an error nobody listens to any more.
        await hungUp(admin, name);
        await giveBack(admin, name);
      }),
  };
};

/** Jest's global tear-down: the pooled databases go (a database some other run holds is left). */
export const dropPooledDatabases = () =>
  withAdmin(POSTGRES_ADMIN_URL, async (admin) => {
    for (const datname of await pooledNames(admin))
      await admin.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => undefined);
  }).catch(() => undefined);

/** A project's creation, as an event to append to a log directly. */
export const projectCreated = (name: string): ProjectCreated => ({
  type: 'ProjectCreated',
  data: { name, createdAt: new Date().toISOString() },
});

/**
 * An append made the way Emmett makes it, on a connection the spec controls: inside an open
 * transaction it holds its position (taken from the sequence) until the spec commits it.
 */
export const appendOn = async (client: pg.Client, name: string) => {
  const id = crypto.randomUUID();
  const event = projectCreated(name);
  await client.query(
    `SELECT * FROM emt_append_to_stream(ARRAY[$1]::text[], ARRAY[$2]::jsonb[], ARRAY[$3]::jsonb[],
       ARRAY[$4]::text[], ARRAY['ProjectCreated']::text[], ARRAY['E']::text[], $5::text, 'project'::text,
       0::bigint, 'emt:default'::text)`,
    [
      id,
      JSON.stringify(event.data),
      JSON.stringify({ messageId: id, recordedAt: event.data.createdAt, schemaVersion: 1 }),
      String(contractOf('ProjectCreated').version),
      `project-${name}`,
    ],
  );
};
