import pg from 'pg';
import { querySql, startPostgresCluster, startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshMariaData, freshPostgresData, postgresParameters } from '../support/external';
import { givenProject, uniqueName } from '../support/world';

type Source = Awaited<ReturnType<typeof freshPostgresData>>;
type Logged = { type: string; stream: string; data: Record<string, unknown>; actor?: string };

/** Runs SQL in the source database directly (as its own clients write to it). */
const inSource = async (source: Source, sql: string) => {
  const c = new pg.Client(postgresParameters({ database: source.name }));
  await c.connect();
  try {
    // As text: the store's PostgreSQL driver may read bigint as BigInt in this process.
    return ((await c.query({ text: sql, rowMode: 'array' })).rows as unknown[][]).map((r) =>
      r.map((v) => (v === null ? null : typeof v === 'number' ? v : String(v))),
    );
  } finally {
    await c.end();
  }
};

const register = async (t: TestApp, source: Source) => {
  const db = uniqueName('trg_src');
  await t.http
    .post('/api/databases')
    .send({ database: { name: db, engine: 'postgres', parameters: source.parameters } })
    .expect(201);
  return db;
};

/**
 * Every test watches a source database of its own (its own tables, and so its own trigger queue,
 * which is one table per database), in a project of its own: the tests pass alone and in any order.
 */
describe.each(storeKinds)('triggers on %s', (store) => {
  let t: TestApp;
  const sources: Source[] = [];
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await t.dispose();
    // Dropped once the app (and its connections to them) is gone; together, as each waits for a checkpoint.
    await Promise.all(sources.map((source) => source.drop()));
  });

  /** A fresh PostgreSQL database with the orders tables, registered under a name of the test's own. */
  const givenSource = async () => {
    const source = await freshPostgresData([
      'CREATE TABLE orders (id int, amount int, note text)',
      'CREATE TABLE big_orders (id bigint, amount bigint)',
    ]);
    sources.push(source);
    return { source, db: await register(t, source) };
  };

  const firingsOf = async (id: number) =>
    (await t.http.get(`/api/events?stream=trigger-firings-${id}`).expect(200)).body.events as Logged[];

  it('runs its statements for the rows the table gains, TABLE_DELTA holding them, once', async () => {
    const { source, db } = await givenSource();
    const { name: project } = await givenProject(t);
    const made = await querySql(
      t,
      `CREATE TRIGGER ${project}.big ON ${db}.orders (INSERT INTO ${db}.big_orders (SELECT id, amount FROM TABLE_DELTA WHERE amount > 10))`,
    );
    expect(made).toMatchObject({ type: 'ok' });
    const created = (
      (await t.http.get(`/api/events?stream=project-${project}`).expect(200)).body.events as (Logged & {
        position: number;
      })[]
    ).find((e) => e.type === 'TriggerCreated')!;
    expect(created.data).toMatchObject({ name: 'big', database: db, table: 'orders', columns: null });

    await inSource(source, "INSERT INTO orders VALUES (1, 5, 'small'), (2, 50, 'x'), (3, 70, 'y')");
    await t.running.triggers.tick();
    expect(await inSource(source, 'SELECT id, amount FROM big_orders ORDER BY id')).toEqual([
      ['2', '50'],
      ['3', '70'],
    ]);
    const firings = await firingsOf(created.position);
    expect(firings.map((e) => [e.type, e.data.rows ?? e.data.statements])).toEqual([
      ['TriggerFired', 3],
      ['TriggerFiringFinished', 1],
    ]);
    expect(firings.every((e) => e.actor === `system:trigger:${created.position}`)).toBe(true);
    // Nothing new: nothing fires; the queue was emptied.
    await t.running.triggers.tick();
    expect(await firingsOf(created.position)).toHaveLength(2);
    expect(await inSource(source, 'SELECT count(*)::int FROM mindledger_trigger_queue')).toEqual([[0]]);
    // Updates fire too.
    await inSource(source, 'UPDATE orders SET amount = 99 WHERE id = 1');
    await t.running.triggers.tick();
    expect(await inSource(source, 'SELECT id, amount FROM big_orders ORDER BY id')).toEqual([
      ['1', '99'],
      ['2', '50'],
      ['3', '70'],
    ]);
    expect((await querySql(t, `SHOW TRIGGERS FROM ${project}`)).data).toEqual([
      ['big', project, db, 'orders', expect.stringContaining('TABLE_DELTA'), null],
    ]);
    await querySql(t, `DROP TRIGGER ${project}.big`);
  });

  it('a failing statement is recorded and shown as LAST_ERROR; the rows are not run again', async () => {
    const { source, db } = await givenSource();
    const { name: project } = await givenProject(t);
    await querySql(
      t,
      `CREATE TRIGGER ${project}.broken ON ${db}.orders (INSERT INTO ${db}.no_such_table (SELECT * FROM TABLE_DELTA))`,
    );
    await inSource(source, "INSERT INTO orders VALUES (10, 1, 'z')");
    await t.running.triggers.tick();
    const shown = await querySql(
      t,
      `SELECT LAST_ERROR FROM information_schema.TRIGGERS WHERE PROJECT = '${project}'`,
    );
    expect(String(shown.data![0]![0])).toMatch(/no_such_table/);
    const id = Number(
      (
        (await t.http.get(`/api/events?stream=project-${project}`).expect(200)).body.events as (Logged & {
          position: number;
        })[]
      ).find((e) => e.type === 'TriggerCreated')!.position,
    );
    expect((await firingsOf(id)).map((e) => e.type)).toEqual(['TriggerFired', 'TriggerFiringFailed']);
    await t.running.triggers.tick();
    expect(await firingsOf(id)).toHaveLength(2);
    await querySql(t, `DROP TRIGGER ${project}.broken`);
  });

  it('DROP TRIGGER removes what it installed in the source; deleting the project drops its triggers', async () => {
    const { source, db } = await givenSource();
    const { name: project } = await givenProject(t);
    const ours = () =>
      inSource(source, "SELECT count(*)::int FROM pg_trigger WHERE tgname LIKE 'mindledger_trigger_%'");
    const before = (await ours())[0]![0] as number;
    await querySql(t, `CREATE TRIGGER ${project}.a ON ${db}.orders (SELECT 1)`);
    expect((await ours())[0]![0]).toBe(before + 1);
    await querySql(t, `DROP TRIGGER ${project}.a`);
    expect((await ours())[0]![0]).toBe(before);
    expect((await querySql(t, `DROP TRIGGER ${project}.a`)).error_message).toMatch(
      /Trigger with name a does not exist/,
    );
    expect((await querySql(t, `DROP TRIGGER IF EXISTS ${project}.a`)).type).toBe('ok');

    await querySql(t, `CREATE TRIGGER ${project}.b ON ${db}.orders (SELECT 1)`);
    await t.http.delete(`/api/projects/${project}`).expect(204);
    expect(
      (await querySql(t, `SELECT * FROM information_schema.TRIGGERS WHERE PROJECT = '${project}'`)).data,
    ).toEqual([]);
  });

  // Deleting a project records TriggerDeleted for each of its triggers (the project slice's cascade)
  // but nothing removes them from the source: the row trigger stayed installed and kept queueing
  // every change of the table for a trigger no process watches, rows never taken off the queue.
  it('deleting the project removes what its triggers installed in the source, and nothing more is queued', async () => {
    const { source, db } = await givenSource();
    const { name: project } = await givenProject(t);
    const ours = () =>
      inSource(source, "SELECT count(*)::int FROM pg_trigger WHERE tgname LIKE 'mindledger_trigger_%'");
    expect((await querySql(t, `CREATE TRIGGER ${project}.b ON ${db}.orders (SELECT 1)`)).type).toBe('ok');
    expect(await ours()).toEqual([[1]]);
    await t.http.delete(`/api/projects/${project}`).expect(204);
    await t.running.triggers.tick();
    expect(await ours()).toEqual([[0]]);
    await inSource(source, "INSERT INTO orders VALUES (1, 5, 'after the project')");
    // The last trigger gone, the queue table went with it.
    expect(
      await inSource(
        source,
        "SELECT count(*)::int FROM information_schema.tables WHERE table_name = 'mindledger_trigger_queue'",
      ),
    ).toEqual([[0]]);
  });

  it('refuses MariaDB sources, databases that are not external, and tables that do not exist; nothing recorded', async () => {
    const maria = await freshMariaData(['CREATE TABLE orders (id int)']);
    try {
      const mdb = uniqueName('trg_maria');
      await t.http
        .post('/api/databases')
        .send({ database: { name: mdb, engine: 'mysql', parameters: maria.parameters } })
        .expect(201);
      const { name: project } = await givenProject(t);
      const onMaria = await querySql(t, `CREATE TRIGGER ${project}.m ON ${mdb}.orders (SELECT 1)`);
      expect(onMaria.error_message).toMatch(/^CREATE TRIGGER on MariaDB sources is not supported/);
      const onProject = await querySql(t, `CREATE TRIGGER ${project}.p ON ${project}.skills (SELECT 1)`);
      expect(onProject.error_message).toMatch(/is not an external database/);
      const { db } = await givenSource();
      const missing = await querySql(t, `CREATE TRIGGER ${project}.x ON ${db}.nothere (SELECT 1)`);
      expect(missing.error_message).toMatch(/nothere/);
      const events = (await t.http.get(`/api/events?stream=project-${project}`).expect(200)).body
        .events as Logged[];
      expect(events.filter((e) => e.type.startsWith('Trigger'))).toEqual([]);
    } finally {
      await maria.drop();
    }
  });
});

describe('triggers on two processes sharing one PostgreSQL log', () => {
  it('a change fires once, whichever process sees it first', async () => {
    const cluster = await startPostgresCluster(2);
    const source = await freshPostgresData([
      'CREATE TABLE events_in (id int)',
      'CREATE TABLE copied (id bigint)',
    ]);
    try {
      const [a, b] = cluster.apps as [TestApp, TestApp];
      const db = await register(a, source);
      await querySql(
        a,
        `CREATE TRIGGER mindsdb.copy ON ${db}.events_in (INSERT INTO ${db}.copied (SELECT id FROM TABLE_DELTA))`,
      );
      for (let round = 0; round < 5; round++) {
        await inSource(source, `INSERT INTO events_in VALUES (${round * 2}), (${round * 2 + 1})`);
        // Both look at once; catch up first so each knows the trigger.
        await b.running.ctx.projections.catchUp();
        await Promise.all([a.running.triggers.tick(), b.running.triggers.tick()]);
      }
      await Promise.all([a.running.triggers.tick(), b.running.triggers.tick()]);
      expect((await inSource(source, 'SELECT id FROM copied ORDER BY id')).map((r) => Number(r[0]))).toEqual([
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
      ]);
    } finally {
      await cluster.dispose();
      await source.drop();
    }
  });
});
