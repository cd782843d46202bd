/**
 * Secrets inside stored SQL texts. A job's (or a trigger's) statements may hold a password or a key
 * (`CREATE DATABASE … PARAMETERS = {"password": …}`, `… USING api_key = …`): the auditor read it in
 * information_schema.EVENTS, and anyone in the project in jobs.QUERY. The statements' option lists
 * are read as the parser reads them (src/shared/sqlOptions.ts): the log holds those values sealed,
 * every reader sees them masked, and the run still executes the statement with the real value, read
 * from the log.
 */
import crypto from 'node:crypto';
import mysql from 'mysql2/promise';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import pg from 'pg';
import { FORGOTTEN } from '../../src/ledger/sealing';
import { freshMariaData, freshPostgresData, postgresParameters } from '../support/external';
import { uniqueName } from '../support/world';
import { manualClock, NO_POLL } from './support';

type Source = Awaited<ReturnType<typeof freshMariaData>>;

const rootQuery = async (sql: string, values: unknown[] = []) => {
  const c = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
  try {
    return await c.query(sql, values);
  } finally {
    await c.end();
  }
};

describe.each(storeKinds)("secrets inside a job's and a trigger's SQL (%s)", (kind) => {
  let t: TestApp;
  let source: Source;
  let pgSource: Awaited<ReturnType<typeof freshPostgresData>>;
  const time = manualClock('2030-01-01T00:00:00.000Z');
  // A MariaDB user with a password: a masked password would be refused by the server.
  const user = `ml_${crypto.randomBytes(4).toString('hex')}`;
  const password = `Pw-${crypto.randomBytes(9).toString('base64url')}`;
  const apiKey = `sk-${crypto.randomBytes(12).toString('hex')}`;

  const sql = async (query: string) =>
    (await t.http.post('/api/sql/query').send({ query }).expect(200)).body as {
      type: string;
      column_names?: string[];
      data?: unknown[][];
      error_message?: string;
    };

  beforeAll(async () => {
    source = await freshMariaData(['CREATE TABLE t (n int)']);
    pgSource = await freshPostgresData(['CREATE TABLE t (n int)']);
    await rootQuery(`CREATE USER ?@'%' IDENTIFIED BY ?`, [user, password]);
    await rootQuery(`GRANT ALL ON ${source.name}.* TO ?@'%'`, [user]);
    t = await startTestApp(kind, NO_POLL, { clock: time.clock });
  });
  afterAll(async () => {
    await t?.dispose();
    await source?.drop();
    await pgSource?.drop();
    await rootQuery(`DROP USER IF EXISTS ?@'%'`, [user]);
  });

  /** Registers the MariaDB source as `name`, signing in with the password (which the statement holds). */
  const databaseStatement = (name: string) =>
    `CREATE DATABASE IF NOT EXISTS ${name} WITH ENGINE = 'mysql', PARAMETERS = {"host": "127.0.0.1", ` +
    `"port": 3306, "user": "${user}", "password": "${password}", "database": "${source.name}"}`;
  /** The JobCreated of the job named `name`, among events of the log. */
  const jobCreated = <E extends { type: string; data: unknown }>(events: readonly E[], name: string) =>
    events.find((e) => e.type === 'JobCreated' && (e.data as { name: string }).name === name);

  it('given a job whose statement holds a password, then no reader sees it, the log holds it sealed, and the run uses it', async () => {
    const made = await sql(
      `CREATE JOB mindsdb.connect (${databaseStatement('secret_db')}; INSERT INTO secret_db.t (SELECT 7 AS n)) EVERY hour`,
    );
    expect(made).toMatchObject({ type: 'ok' });
    await t.running.jobs.tick();

    // The run signed in with the real password (MariaDB refuses the mask) and wrote its row.
    const history = (await t.http.get('/api/projects/mindsdb/jobs/connect/history').expect(200)).body as {
      status: string;
      error: string | null;
      query: string;
    }[];
    expect(history.map((r) => [r.status, r.error])).toEqual([['finished', null]]);
    expect((await rootQuery(`SELECT n FROM ${source.name}.t`))[0]).toEqual([{ n: 7 }]);

    // Every reader: the REST job, the catalogs, the history, the audit trail in SQL and in REST.
    const job = (await t.http.get('/api/projects/mindsdb/jobs/connect').expect(200)).body as {
      query: string;
    };
    const jobsTable = await sql("SELECT QUERY FROM information_schema.jobs WHERE NAME = 'connect'");
    // (Other tests' jobs are left aside: this job's JobCreated is the one naming it.)
    const events = await sql("SELECT DATA FROM information_schema.events WHERE TYPE = 'JobCreated'");
    const ran = await sql('SELECT QUERY FROM information_schema.jobs_history');
    const audit = JSON.stringify((await t.http.get('/api/events?limit=1000').expect(200)).body);
    const shown = [job.query, JSON.stringify(jobsTable), JSON.stringify(events), JSON.stringify(ran), audit];
    for (const text of shown) expect(text).not.toContain(password);
    expect(job.query).toContain('"password": "******"');
    expect(job.query).toContain(`"user": "${user}"`);
    const createdData = (
      events.data!.map((r) => JSON.parse(String(r[0]))) as { name: string; query: string }[]
    ).find((d) => d.name === 'connect')!;
    expect(createdData.query).toContain('"password": "******"');
    expect(history[0]!.query).toContain('"password": "******"');

    // The log as stored holds it sealed; read back through the vault it opens, as the run read it.
    const log = await t.running.ctx.log.readPage({ after: 0n, limit: 100_000 });
    expect(JSON.stringify(log.map((e) => e.data))).not.toContain(password);
    const created = jobCreated(log, 'connect')!.data as { query: string };
    expect(created.query).toMatch(/"password": "enc:v1:[^"]+", "database"/);
  });

  it('given such a job, run and dropped with DROP JOB … FORGET, then its statements read with the secret forgotten, in its definition and in its runs', async () => {
    // Given a job of its own, whose statement holds the password, run once (writing to a table of its own)
    const job = uniqueName('forgotten');
    const db = uniqueName('secret_db');
    await rootQuery(`CREATE TABLE ${source.name}.${job} (n int)`);
    const made = await sql(
      `CREATE JOB mindsdb.${job} (${databaseStatement(db)}; INSERT INTO ${db}.${job} (SELECT 8 AS n)) EVERY hour`,
    );
    expect(made).toMatchObject({ type: 'ok' });
    await t.running.jobs.tick();
    expect((await rootQuery(`SELECT n FROM ${source.name}.${job}`))[0]).toEqual([{ n: 8 }]);
    const project = (await t.running.ctx.log.readStream('project-mindsdb', 0n)).events;
    const created = jobCreated(project, job)!;
    const runsStream = `job-runs-${created.meta.position}`;
    const runsData = async () =>
      JSON.stringify((await t.running.ctx.log.readStream(runsStream, 0n)).events.map((e) => e.data));
    expect(await runsData()).toContain(password);

    expect(await sql(`DROP JOB mindsdb.${job} FORGET`)).toMatchObject({ type: 'ok' });
    const definition = jobCreated((await t.running.ctx.log.readStream('project-mindsdb', 0n)).events, job)!
      .data as { query: string };
    expect(definition.query).toContain(`"password": "${FORGOTTEN}"`);
    expect(definition.query).toContain(`"user": "${user}"`);
    const runs = await runsData();
    expect(runs).not.toContain(password);
    expect(runs).toContain(FORGOTTEN);
  });

  it('given a trigger whose statement holds a key, then its query is shown masked and its text kept whole in the log', async () => {
    const made = await t.http
      .post('/api/databases')
      .send({ database: { name: 'trig_src', engine: 'postgres', parameters: pgSource.parameters } })
      .expect(201);
    expect(made.body).toMatchObject({ name: 'trig_src' });
    const trigger = await sql(
      `CREATE TRIGGER mindsdb.on_t ON trig_src.t (CREATE SKILL IF NOT EXISTS mindsdb.s USING type = 'text2sql', ` +
        `database = 'trig_src', tables = ['t'], api_key = '${apiKey}')`,
    );
    expect([trigger.type, trigger.error_message]).toEqual(['ok', undefined]);
    const listed = await sql("SELECT QUERY FROM information_schema.triggers WHERE NAME = 'on_t'");
    expect(JSON.stringify(listed)).not.toContain(apiKey);
    expect(JSON.stringify(listed.data)).toContain("api_key = '******'");
    const stored = JSON.stringify(
      (await t.running.ctx.log.readPage({ after: 0n, limit: 100_000 })).map((e) => e.data),
    );
    expect(stored).not.toContain(apiKey);
    // Fired, the trigger runs its statement as written (read from the log): the skill holds the key.
    const c = new pg.Client(postgresParameters({ database: pgSource.name }));
    await c.connect();
    await c.query('INSERT INTO t VALUES (1)');
    await c.end();
    await t.running.triggers.tick();
    const skill = (await t.http.get('/api/projects/mindsdb/skills/s').expect(200)).body as {
      params: Record<string, unknown>;
    };
    expect(skill.params).toMatchObject({ api_key: '******', database: 'trig_src' });
    const read = (await t.running.ctx.log.readStream('project-mindsdb', 0n)).events;
    const created = read.find((e) => e.type === 'SkillCreated')!.data as { params: Record<string, unknown> };
    expect(created.params.api_key).toBe(apiKey);

    // Dropped with FORGET, the trigger's statement reads with the key forgotten; the skill it made
    // is a resource of its own and keeps its key.
    expect(await sql('DROP TRIGGER mindsdb.on_t FORGET')).toMatchObject({ type: 'ok' });
    const after = (await t.running.ctx.log.readStream('project-mindsdb', 0n)).events;
    const definition = after.find((e) => e.type === 'TriggerCreated')!.data as { query: string };
    expect(definition.query).toContain(`api_key = '${FORGOTTEN}'`);
    expect(definition.query).toContain("database = 'trig_src'");
    const madeSkill = after.find((e) => e.type === 'SkillCreated')!.data as {
      params: Record<string, unknown>;
    };
    expect(madeSkill.params.api_key).toBe(apiKey);
  });
});
