import crypto from 'node:crypto';
import pg from 'pg';
import { problemOf, querySql, startPostgresCluster, startTestApp, type TestApp } from '../support/app';
import { until } from '../support/until';
import { freshPostgresData, postgresParameters } from '../support/external';
import { withDelta } from '../../src/triggers/source';
import { givenProject, uniqueName } from '../support/world';

type Source = Awaited<ReturnType<typeof freshPostgresData>>;
type Logged = { type: string; stream: string; data: Record<string, unknown>; position: number };

/** The customer's tables, in a schema of their own (the integration is registered with `schema: 'demo'`). */
const CUSTOMER_TABLES = [
  'CREATE SCHEMA demo',
  'CREATE TABLE demo.listings (id int, title text)',
  'CREATE TABLE demo.copies (id bigint, title text)',
];

/** A queue table in `public` as ours looks: a trigger that wrote into it would never fire. */
const DECOY_QUEUE =
  'CREATE TABLE public.mindledger_trigger_queue (id BIGSERIAL PRIMARY KEY, trigger_key TEXT NOT NULL, op TEXT NOT NULL, row_data JSONB NOT NULL, queued_at TIMESTAMPTZ NOT NULL DEFAULT now())';

/**
 * Runs SQL in the customer's database as one of the customer's own clients: its own connection,
 * its own search_path (the server's default unless given), its own role (postgres unless given).
 */
const asCustomer = async (
  source: Source,
  sql: string,
  client: { searchPath?: string; user?: string } = {},
): Promise<unknown[][]> => {
  const c = new pg.Client({
    ...postgresParameters({ database: source.name }),
    ...(client.user ? { user: client.user } : {}),
    ...(client.searchPath ? { options: `-c search_path=${client.searchPath}` } : {}),
  });
  await c.connect();
  try {
    // As text: the store's PostgreSQL driver may read bigint as BigInt in this process.
    return ((await c.query({ text: sql, rowMode: 'array' })).rows as unknown[][]).map((r) =>
      r.map((v) => (v === null || typeof v === 'number' || typeof v === 'boolean' ? v : String(v))),
    );
  } finally {
    await c.end();
  }
};

/** What of ours is in the customer's database, by the catalogs (not by our own bookkeeping). */
const installed = async (source: Source) => {
  const [[functions, triggers, queue, index]] = (await asCustomer(
    source,
    `SELECT
       (SELECT count(*)::int FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE p.proname LIKE 'mindledger\\_trigger\\_%'),
       (SELECT count(*)::int FROM pg_trigger WHERE tgname LIKE 'mindledger\\_trigger\\_%'),
       (SELECT count(*)::int FROM information_schema.tables
         WHERE table_schema = 'demo' AND table_name = 'mindledger_trigger_queue'),
       (SELECT count(*)::int FROM pg_indexes
         WHERE schemaname = 'demo' AND indexname = 'mindledger_trigger_queue_key')`,
  )) as [[number, number, number, number]];
  return { functions, triggers, queue, index };
};

/**
 * A trigger watches a table of the customer's database: whatever it installs there must never break
 * (nor silently divert) the customer's own INSERTs, whoever makes them and with whatever search_path,
 * and it leaves nothing behind once dropped. Every test has a source database and a project of its own.
 */
describe('what a trigger installs in the customer database', () => {
  let t: TestApp;
  const sources: Source[] = [];
  const role = `ml_customer_${crypto.randomBytes(5).toString('hex')}`;
  let roleIn: Source | undefined;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(async () => {
    await t.dispose();
    if (roleIn) {
      await asCustomer(roleIn, `DROP OWNED BY ${role}`);
      await asCustomer(roleIn, `DROP ROLE IF EXISTS ${role}`);
    }
    await Promise.all(sources.map((source) => source.drop()));
  });

  /** The customer's database, registered with `schema: 'demo'` under a name of the test's own. */
  const givenCustomer = async () => {
    const source = await freshPostgresData(CUSTOMER_TABLES);
    sources.push(source);
    const db = uniqueName('trg_customer');
    await t.http
      .post('/api/databases')
      .send({
        database: { name: db, engine: 'postgres', parameters: { ...source.parameters, schema: 'demo' } },
      })
      .expect(201);
    return { source, db };
  };

  /** Creates a trigger copying every new row into demo.copies; its TriggerCreated event. */
  const givenCopyingTrigger = async (db: string, project: string, name = 'copy') => {
    const made = await querySql(
      t,
      `CREATE TRIGGER ${project}.${name} ON ${db}.listings (INSERT INTO ${db}.copies (SELECT id, title FROM TABLE_DELTA))`,
    );
    expect(made).toMatchObject({ type: 'ok' });
    return (
      (await t.http.get(`/api/events?stream=project-${project}`).expect(200)).body.events as Logged[]
    ).find((e) => e.type === 'TriggerCreated' && e.data.name === name)!;
  };

  const firingsOf = async (id: number) =>
    ((await t.http.get(`/api/events?stream=trigger-firings-${id}`).expect(200)).body.events as Logged[]).map(
      (e) => [e.type, e.data.rows ?? e.data.statements ?? e.data.error],
    );

  const copies = (source: Source) => asCustomer(source, 'SELECT id, title FROM demo.copies ORDER BY id');

  it("every client's INSERT succeeds and fires, whatever its search_path; a decoy queue in public gets nothing", async () => {
    const { source, db } = await givenCustomer();
    const { name: project } = await givenProject(t);
    const created = await givenCopyingTrigger(db, project);

    // The function runs as its owner with its search path pinned, and names the queue in full.
    const [[definer, config, body]] = (await asCustomer(
      source,
      `SELECT prosecdef, array_to_string(proconfig, ';'), prosrc FROM pg_proc p
         JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'demo' AND p.proname = 'mindledger_trigger_${String(created.data.key)}'`,
    )) as [[boolean, string, string]];
    expect([definer, config]).toEqual([true, 'search_path=pg_catalog, pg_temp']);
    expect(body).toContain('INSERT INTO "demo"."mindledger_trigger_queue"');

    // (a) the server's default search_path ("$user", public): no queue table there at all.
    expect(await asCustomer(source, 'SHOW search_path')).toEqual([['"$user", public']]);
    await asCustomer(source, "INSERT INTO demo.listings VALUES (1, 'default path')");
    // (b) the table's own schema.
    await asCustomer(source, "INSERT INTO listings VALUES (2, 'demo path')", { searchPath: 'demo' });
    // (c) public first, where a table by our queue's name and shape now exists.
    await asCustomer(source, DECOY_QUEUE);
    await asCustomer(source, "INSERT INTO listings VALUES (3, 'public first')", {
      searchPath: 'public,demo',
    });

    expect(await asCustomer(source, 'SELECT count(*)::int FROM public.mindledger_trigger_queue')).toEqual([
      [0],
    ]);
    await t.running.triggers.tick();
    expect(await copies(source)).toEqual([
      ['1', 'default path'],
      ['2', 'demo path'],
      ['3', 'public first'],
    ]);
    expect(await firingsOf(created.position)).toEqual([
      ['TriggerFired', 3],
      ['TriggerFiringFinished', 1],
    ]);
    // Fired rows leave our queue; the decoy was never written.
    expect(await asCustomer(source, 'SELECT count(*)::int FROM demo.mindledger_trigger_queue')).toEqual([
      [0],
    ]);
    expect(await asCustomer(source, 'SELECT count(*)::int FROM public.mindledger_trigger_queue')).toEqual([
      [0],
    ]);
  });

  it('a role that may only insert into the table inserts, and the trigger fires', async () => {
    const { source, db } = await givenCustomer();
    roleIn = source;
    await asCustomer(source, `CREATE ROLE ${role} LOGIN`);
    await asCustomer(source, `GRANT USAGE ON SCHEMA demo TO ${role}`);
    await asCustomer(source, `GRANT INSERT ON demo.listings TO ${role}`);
    const { name: project } = await givenProject(t);
    const created = await givenCopyingTrigger(db, project);

    await asCustomer(source, "INSERT INTO demo.listings VALUES (7, 'by a clerk')", { user: role });
    // The role has no right on our queue (it needs none).
    expect(
      await asCustomer(
        source,
        `SELECT has_table_privilege('${role}', 'demo.mindledger_trigger_queue', 'INSERT')`,
      ),
    ).toEqual([[false]]);

    await t.running.triggers.tick();
    expect(await copies(source)).toEqual([['7', 'by a clerk']]);
    expect(await firingsOf(created.position)).toEqual([
      ['TriggerFired', 1],
      ['TriggerFiringFinished', 1],
    ]);
  });

  it('DROP TRIGGER removes its function and trigger and, being the last, the queue table and its index', async () => {
    const { source, db } = await givenCustomer();
    const { name: project } = await givenProject(t);
    await givenCopyingTrigger(db, project);
    expect(await installed(source)).toEqual({ functions: 1, triggers: 1, queue: 1, index: 1 });
    // A row queued and not yet fired goes with it.
    await asCustomer(source, "INSERT INTO demo.listings VALUES (1, 'never fired')");

    expect(await querySql(t, `DROP TRIGGER ${project}.copy`)).toMatchObject({ type: 'ok' });
    expect(await installed(source)).toEqual({ functions: 0, triggers: 0, queue: 0, index: 0 });
    // Nothing of ours in the schema at all (the queue's sequence went with it).
    expect(
      await asCustomer(
        source,
        "SELECT relname FROM pg_class WHERE relnamespace = 'demo'::regnamespace ORDER BY relname",
      ),
    ).toEqual([['copies'], ['listings']]);
    // The customer's table takes rows as before.
    await asCustomer(source, "INSERT INTO demo.listings VALUES (2, 'after')");
    expect(await asCustomer(source, 'SELECT count(*)::int FROM demo.listings')).toEqual([[2]]);
  });

  it('a watched database is not deleted under its triggers: refused over SQL and REST, naming them, and deleted once they are dropped', async () => {
    const { source, db } = await givenCustomer();
    const { name: project } = await givenProject(t);
    await givenCopyingTrigger(db, project, 'first');
    await givenCopyingTrigger(db, project, 'second');
    // Before, DROP DATABASE succeeded and left both functions, row triggers and the queue in the
    // customer's database: its clients' INSERTs filled the queue for good, and deleting the
    // project could no longer reach the database to remove them.
    const refusal = `Database ${db} is watched by triggers ${project}.first, ${project}.second, so it cannot be deleted: DROP TRIGGER first, which removes what it installed in the database`;
    expect(await querySql(t, `DROP DATABASE ${db}`)).toMatchObject({ type: 'error', error_message: refusal });
    const rest = await t.http.delete(`/api/databases/${db.toUpperCase()}`).expect(409);
    expect(rest.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(rest.body).toMatchObject({ status: 409, detail: refusal.replace(db, db.toUpperCase()) });
    expect(await installed(source)).toEqual({ functions: 2, triggers: 2, queue: 1, index: 1 });
    expect((await t.http.get(`/api/databases/${db}`).expect(200)).body).toMatchObject({ name: db });
    // Nothing was recorded by the refusals.
    const deleted = (await t.http.get(`/api/events?stream=database-${db}`).expect(200)).body
      .events as Logged[];
    expect(deleted.map((e) => e.type)).toEqual(['DatabaseCreated']);

    expect(await querySql(t, `DROP TRIGGER ${project}.first`)).toMatchObject({ type: 'ok' });
    expect(await querySql(t, `DROP DATABASE ${db}`)).toMatchObject({
      type: 'error',
      error_message: `Database ${db} is watched by trigger ${project}.second, so it cannot be deleted: DROP TRIGGER first, which removes what it installed in the database`,
    });
    // Nor connected elsewhere (its objects would be out of reach of DROP TRIGGER); a password may change.
    const moved = await t.http
      .put(`/api/databases/${db}`)
      .send({ database: { parameters: { ...source.parameters, schema: 'public' } } })
      .expect(409);
    expect(moved.body.detail).toBe(
      `Database ${db} is watched by trigger ${project}.second, so its connection cannot change (a new password may): DROP TRIGGER first, which removes what it installed in the database`,
    );
    await t.http
      .put(`/api/databases/${db}`)
      .send({ database: { parameters: { ...source.parameters, schema: 'demo', password: 'rotated' } } })
      .expect(200);
    const events = (await t.http.get(`/api/events?stream=database-${db}`).expect(200)).body
      .events as Logged[];
    expect(events.map((e) => e.type)).toEqual(['DatabaseCreated', 'DatabaseUpdated']);
    expect(events[1]!.data.parameters).toMatchObject({ schema: 'demo', password: '******' });
    expect(await querySql(t, `DROP TRIGGER ${project}.second`)).toMatchObject({ type: 'ok' });
    expect(await querySql(t, `DROP DATABASE ${db}`)).toMatchObject({ type: 'ok' });
    expect(await installed(source)).toEqual({ functions: 0, triggers: 0, queue: 0, index: 0 });
  });

  it('with two triggers, dropping one keeps the queue (the other still fires); deleting the project with the second removes it', async () => {
    const { source, db } = await givenCustomer();
    const { name: project } = await givenProject(t);
    await givenCopyingTrigger(db, project, 'first');
    const second = await givenCopyingTrigger(db, project, 'second');
    expect(await installed(source)).toEqual({ functions: 2, triggers: 2, queue: 1, index: 1 });

    expect(await querySql(t, `DROP TRIGGER ${project}.first`)).toMatchObject({ type: 'ok' });
    expect(await installed(source)).toEqual({ functions: 1, triggers: 1, queue: 1, index: 1 });
    await asCustomer(source, "INSERT INTO demo.listings VALUES (5, 'still watched')");
    await t.running.triggers.tick();
    expect(await copies(source)).toEqual([['5', 'still watched']]);
    expect(await firingsOf(second.position)).toEqual([
      ['TriggerFired', 1],
      ['TriggerFiringFinished', 1],
    ]);

    await t.http.delete(`/api/projects/${project}`).expect(204);
    expect(await installed(source)).toEqual({ functions: 0, triggers: 0, queue: 0, index: 0 });
  });

  it('TABLE_DELTA carries a value with a backslash, a quote, a question mark and a newline unaltered', async () => {
    const { source, db } = await givenCustomer();
    const { name: project } = await givenProject(t);
    const created = await givenCopyingTrigger(db, project);
    const value = "C:\\new\\table_delta\\b it's? a 'TABLE_DELTA' \\\\ \\' \\n\nline two?";
    const c = new pg.Client(postgresParameters({ database: source.name }));
    await c.connect();
    try {
      await c.query('INSERT INTO demo.listings VALUES ($1, $2)', [9, value]);
    } finally {
      await c.end();
    }

    await t.running.triggers.tick();
    expect(await firingsOf(created.position)).toEqual([
      ['TriggerFired', 1],
      ['TriggerFiringFinished', 1],
    ]);
    expect(await copies(source)).toEqual([['9', value]]);
  });
});

describe('a trigger created on another process of a shared log', () => {
  it('given a trigger just created on node A, when node B, its read model not there yet, is asked to delete the database, then B waits for the log (503 past its wait), then refuses naming the trigger; nothing recorded, nothing removed', async () => {
    const cluster = await startPostgresCluster(2, { env: { READ_MIN_POSITION_WAIT_MS: '1000' } });
    const source = await freshPostgresData(CUSTOMER_TABLES);
    try {
      const [a, b] = cluster.apps as [TestApp, TestApp];
      const db = uniqueName('trg_nodes');
      await a.http
        .post('/api/databases')
        .send({
          database: { name: db, engine: 'postgres', parameters: { ...source.parameters, schema: 'demo' } },
        })
        .expect(201);
      const { name: project } = await givenProject(a);
      await until(`${db} on node B`, async () =>
        (await b.http.get(`/api/databases/${db}`)).status === 200 ? true : undefined,
      );
      // B's read model stops before the trigger's event, as one a few milliseconds behind does.
      const held = b.running.ctx.projections.hold();
      try {
        const made = await querySql(
          a,
          `CREATE TRIGGER ${project}.copy ON ${db}.listings (INSERT INTO ${db}.copies (SELECT id, title FROM TABLE_DELTA))`,
        );
        expect(made).toMatchObject({ type: 'ok' });
        await held.reached;
        // Before, B read the triggers from its read model as it stood, found none and deleted the
        // database: the trigger's function, row trigger and queue stayed in the customer's database.
        const behind = await b.http.delete(`/api/databases/${db}`).expect(503);
        expect(behind.body).toMatchObject({ status: 503, title: 'Read model behind' });
        expect(behind.body.detail).toContain(`the triggers watching ${db} are read from`);
        expect(problemOf(behind).detail).toMatch(/within 1000 ms \(READ_MIN_POSITION_WAIT_MS\)/);
      } finally {
        held.release();
      }
      const refused = await b.http.delete(`/api/databases/${db}`).expect(409);
      expect(refused.body.detail).toBe(
        `Database ${db} is watched by trigger ${project}.copy, so it cannot be deleted: DROP TRIGGER first, which removes what it installed in the database`,
      );
      expect(await installed(source)).toEqual({ functions: 1, triggers: 1, queue: 1, index: 1 });
      const events = (await a.http.get(`/api/events?stream=database-${db}`).expect(200)).body
        .events as Logged[];
      expect(events.map((e) => e.type)).toEqual(['DatabaseCreated']);
      expect(await querySql(a, `DROP TRIGGER ${project}.copy`)).toMatchObject({ type: 'ok' });
    } finally {
      await cluster.dispose();
      await source.drop();
    }
  });
});

describe('withDelta: TABLE_DELTA read as the rows of a firing', () => {
  const rows = [{ id: 1, title: "it's a\\b" }];
  const delta = "(SELECT * FROM (VALUES (1, 'it''s a\\\\b')) AS table_delta(`id`, `title`))";

  it.each([
    ['SELECT id FROM TABLE_DELTA WHERE id > 0', `SELECT id FROM ${delta} AS table_delta WHERE id > 0`],
    ['SELECT d.id FROM table_delta d', `SELECT d.id FROM ${delta} d`],
    ['SELECT d.id FROM Table_Delta AS d JOIN x ON 1', `SELECT d.id FROM ${delta} AS d JOIN x ON 1`],
    ['SELECT TABLE_DELTA.id FROM TABLE_DELTA', `SELECT table_delta.id FROM ${delta} AS table_delta`],
    [
      "SELECT 'TABLE_DELTA', `TABLE_DELTA`, x.TABLE_DELTA FROM TABLE_DELTA -- TABLE_DELTA",
      `SELECT 'TABLE_DELTA', \`TABLE_DELTA\`, x.TABLE_DELTA FROM ${delta} AS table_delta -- TABLE_DELTA`,
    ],
  ])('%s', (statement, expected) => {
    expect(withDelta(statement, rows)).toBe(expected);
  });
});
