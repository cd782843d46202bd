/**
 * Issue 37, defect 4: psql's `\dv` and `\dt` hid views and knowledge bases, which
 * information_schema.TABLES listed. The PostgreSQL door's catalog shadow is built from
 * information_schema.COLUMNS, which listed no column of a view or a knowledge base, so the shadow
 * made no relation for them. COLUMNS now lists a view's columns as its query answers them and a
 * knowledge base's as `SELECT *` of it answers them (src/sql/catalog.ts, objectColumns.ts), and
 * the shadow makes views of the tables TABLES calls views. Every object a project holds shows in
 * the catalogs the tools read, over HTTP, the PostgreSQL door and the MySQL door alike, and a
 * project-scoped token still sees its own project's only.
 */
import type mysql from 'mysql2/promise';
import type { PgServer } from '../../src/pgwire';
import type { MysqlServer } from '../../src/mysql';
import type { TestApp } from '../support/app';
import { ADMIN, login, mysqlAs, sqlOver, startAuthApp, startMysqlDoor } from '../auth/support';
import { freshPostgresData } from '../support/external';
import { pgClient, runPsql, startPgDoor } from './support';

type Answer = Awaited<ReturnType<typeof sqlOver>>;

const rows = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => l.split('|'));

/** The knowledge base `pa.notes`'s columns, as SELECT * answers them: its own, then its metadata's. */
const NOTES_COLUMNS = ['id', 'chunk_id', 'chunk_content', 'metadata', 'distance', 'relevance', 'topic'];

describe("a project's views and knowledge bases in the catalogs tools read", () => {
  let t: TestApp;
  let admin: string;
  let pg: PgServer;
  let my: MysqlServer;
  let mysqlClient: mysql.Connection;

  const sql = async (query: string) => {
    const answer = await sqlOver(t, admin, query);
    if (answer.type === 'error') throw new Error(`${query}: ${answer.error_message}`);
    return answer;
  };
  /** psql as the admin (authentication is on: a password over loopback); `args` before -c. */
  const psql = async (command: string, args: string[] = []) => {
    const out = await runPsql(pg.port, command, {
      user: ADMIN.name,
      env: { PGPASSWORD: ADMIN.password },
      args,
    });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    return rows(out.stdout);
  };
  const columnsOf = async (schema: string, table: string, as: (q: string) => Promise<Answer> = sql) =>
    (
      await as(
        `SELECT COLUMN_NAME, DATA_TYPE, ORDINAL_POSITION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '${schema}' AND TABLE_NAME = '${table}' ORDER BY ORDINAL_POSITION`,
      )
    ).data;

  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    admin = await login(t, ADMIN.name, ADMIN.password);
    for (const p of ['pa', 'pb']) await sql(`CREATE PROJECT ${p}`);
    await sql(`CREATE VIEW pa.numbers AS (SELECT 1 AS one, 'x' AS letter, 2.5 AS ratio)`);
    await sql(`CREATE VIEW pa.skill_names AS (SELECT NAME AS skill, PROJECT AS home FROM pa.skills)`);
    await sql(
      `CREATE KNOWLEDGE_BASE pa.notes USING metadata_columns = ['topic'], content_columns = ['content'], id_column = 'id'`,
    );
    await sql(`CREATE VIEW pb.hidden AS (SELECT 7 AS seven)`);
    pg = await startPgDoor(t, { authOn: true });
    my = await startMysqlDoor(t);
    mysqlClient = await mysqlAs(my, ADMIN.name, ADMIN.password);
  }, 60_000);

  afterAll(async () => {
    mysqlClient?.destroy();
    await my?.close(0);
    await pg?.close(0);
    await t?.dispose();
  });

  it("given views and a knowledge base, when information_schema.COLUMNS is read over HTTP, then it lists each one's columns as SELECT * answers them", async () => {
    expect(await columnsOf('pa', 'numbers')).toEqual([
      ['one', 'INTEGER', 1],
      ['letter', 'VARCHAR', 2],
      ['ratio', 'DECIMAL(2,1)', 3],
    ]);
    expect(await columnsOf('pa', 'skill_names')).toEqual([
      ['skill', 'VARCHAR', 1],
      ['home', 'VARCHAR', 2],
    ]);
    const kb = await sql('SELECT * FROM pa.notes LIMIT 0');
    expect(kb.column_names).toEqual(NOTES_COLUMNS);
    const answered = (kb as Answer & { column_types: string[] }).column_types;
    expect(await columnsOf('pa', 'notes')).toEqual(
      kb.column_names!.map((name, i) => [name, answered[i], i + 1]),
    );
    // Every table TABLES lists in a project has its columns in COLUMNS.
    const listed = async (table: string) =>
      new Set(
        (
          await sql(
            `SELECT DISTINCT TABLE_SCHEMA || '.' || TABLE_NAME FROM information_schema.${table} WHERE TABLE_SCHEMA IN ('pa', 'pb')`,
          )
        ).data!.map((r) => String(r[0])),
      );
    expect(await listed('COLUMNS')).toEqual(await listed('TABLES'));
  });

  it('when a view changes or goes, then COLUMNS follows it at once', async () => {
    await sql(`CREATE VIEW pa.changing AS (SELECT 1 AS a)`);
    expect(await columnsOf('pa', 'changing')).toEqual([['a', 'INTEGER', 1]]);
    await sql(`ALTER VIEW pa.changing AS (SELECT 'b' AS b, 2 AS c)`);
    expect(await columnsOf('pa', 'changing')).toEqual([
      ['b', 'VARCHAR', 1],
      ['c', 'INTEGER', 2],
    ]);
    await sql(`DROP VIEW pa.changing`);
    expect(await columnsOf('pa', 'changing')).toEqual([]);
  });

  it('given a knowledge base without declared metadata columns, when an insert brings a new field, then COLUMNS lists it as SELECT * does', async () => {
    await sql(`CREATE KNOWLEDGE_BASE pa.loose USING content_columns = ['content'], id_column = 'id'`);
    const answered = async () => {
      const kb = (await sql('SELECT * FROM pa.loose LIMIT 0')) as Answer & { column_types: string[] };
      return kb.column_names!.map((name, i) => [name, kb.column_types[i], i + 1]);
    };
    const before = await answered();
    expect(await columnsOf('pa', 'loose')).toEqual(before);
    await sql(`INSERT INTO pa.loose (id, content, colour) VALUES ('a', 'a red apple', 'red')`);
    const after = await answered();
    expect(after.map((c) => c[0])).toContain('colour');
    expect(await columnsOf('pa', 'loose')).toEqual(after);
  });

  it('given views reading a view and reading information_schema.COLUMNS itself, when COLUMNS is read, then it lists both', async () => {
    await sql(`CREATE VIEW pa.on_numbers AS (SELECT one + 1 AS two FROM pa.numbers)`);
    await sql(`CREATE VIEW pa.catalogue AS (SELECT TABLE_NAME AS listed FROM information_schema.COLUMNS)`);
    expect(await columnsOf('pa', 'on_numbers')).toEqual([['two', 'INTEGER', 1]]);
    expect(await columnsOf('pa', 'catalogue')).toEqual([['listed', 'VARCHAR', 1]]);
    await sql('DROP VIEW pa.on_numbers');
    await sql('DROP VIEW pa.catalogue');
  });

  it("given a view of an external database's table, when COLUMNS is read, then it lists the columns that database answers", async () => {
    const ext = await freshPostgresData([
      'CREATE TABLE faq (ref text PRIMARY KEY, views integer NOT NULL, asked timestamp)',
    ]);
    try {
      await sql(
        `CREATE DATABASE ext_faq WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(ext.parameters)}`,
      );
      await sql(`CREATE VIEW pa.faq_view AS (SELECT ref, views, asked FROM ext_faq.faq)`);
      const answered = (await sql('SELECT * FROM pa.faq_view LIMIT 0')) as Answer & {
        column_types: string[];
      };
      expect(answered.column_names).toEqual(['ref', 'views', 'asked']);
      expect(await columnsOf('pa', 'faq_view')).toEqual(
        answered.column_names!.map((name, i) => [name, answered.column_types[i], i + 1]),
      );
    } finally {
      await sql('DROP VIEW IF EXISTS pa.faq_view').catch(() => undefined);
      await sql('DROP DATABASE IF EXISTS ext_faq').catch(() => undefined);
      await ext.drop();
    }
  });

  it("given a project-scoped token, when it reads COLUMNS, then it sees its project's views and knowledge base, and nothing of another project's", async () => {
    const res = await t.http
      .post('/api/tokens')
      .set('Cookie', admin)
      .send({ name: 'pa_only', project: 'pa' })
      .expect(201);
    const bearer = `Bearer ${(res.body as { token: string }).token}`;
    const asToken = async (query: string) =>
      (await t.http.post('/api/sql/query').set('Authorization', bearer).send({ query }).expect(200))
        .body as Answer;
    expect(await columnsOf('pa', 'numbers', asToken)).toEqual(await columnsOf('pa', 'numbers'));
    expect(await columnsOf('pa', 'notes', asToken)).toEqual(await columnsOf('pa', 'notes'));
    expect(await columnsOf('pb', 'hidden')).toEqual([['seven', 'INTEGER', 1]]);
    expect(await columnsOf('pb', 'hidden', asToken)).toEqual([]);
    const schemas = await asToken('SELECT DISTINCT TABLE_SCHEMA FROM information_schema.COLUMNS');
    expect(new Set(schemas.data!.map((r) => r[0]))).toEqual(new Set(['information_schema', 'pa']));
  });

  it('when psql runs \\dt and \\dv, then tables and knowledge bases are tables, views are views', async () => {
    const tables = await psql('\\dt pa.*');
    expect(tables).toContainEqual(['pa', 'notes', 'table', 'mindledger']);
    expect(tables).toContainEqual(['pa', 'skills', 'table', 'mindledger']);
    expect(tables.map((r) => r[1])).not.toContain('numbers');
    const views = await psql('\\dv pa.*');
    expect(views).toEqual([
      ['pa', 'numbers', 'view', 'mindledger'],
      ['pa', 'skill_names', 'view', 'mindledger'],
    ]);
    expect(await psql('\\dv pb.*')).toEqual([['pb', 'hidden', 'view', 'mindledger']]);
  });

  it("when psql describes a view and a knowledge base (\\d, \\d+), then it shows their columns with the shadow's type names, and the view's query", async () => {
    const view = await psql('\\d pa.numbers');
    expect(view.map((r) => r.slice(0, 2))).toEqual([
      ['one', 'int4'],
      ['letter', 'varchar'],
      ['ratio', 'numeric(2,1)'],
    ]);
    const kb = await psql('\\d pa.notes');
    expect(kb.map((r) => r[0])).toEqual(NOTES_COLUMNS);
    // \d+ prints the view's definition (a footer: shown with tuples_only off): its own query, not
    // the shadow's empty SELECT.
    const verbose = (await psql('\\d+ pa.numbers', ['-P', 'tuples_only=off'])).map((r) => r.join('|'));
    expect(verbose.slice(0, 2)).toEqual([
      'View "pa.numbers"',
      'Column|Type|Collation|Nullable|Default|Storage|Description',
    ]);
    expect(verbose.slice(-2)).toEqual(['View definition:', "SELECT 1 AS one, 'x' AS letter, 2.5 AS ratio"]);
    expect(
      await psql("SELECT viewname, definition FROM pg_catalog.pg_views WHERE schemaname = 'pa' ORDER BY 1"),
    ).toEqual([
      ['numbers', "SELECT 1 AS one, 'x' AS letter, 2.5 AS ratio"],
      ['skill_names', 'SELECT NAME AS skill, PROJECT AS home FROM pa.skills'],
    ]);
  });

  it('given a connection that has read the catalog, when a view is made over HTTP or on that connection, then its next catalog query lists it at once', async () => {
    const client = await pgClient(pg.port, { user: ADMIN.name, password: ADMIN.password });
    try {
      const views = async () =>
        (
          await client.query<{ relname: string }>(
            `SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'pa' AND c.relkind = 'v' ORDER BY 1`,
          )
        ).rows.map((r) => r.relname);
      expect(await views()).not.toContain('made_over_http');
      // Another door's write, then the same connection's catalog: no listing of a moment ago is reused.
      await sql(`CREATE VIEW pa.made_over_http AS (SELECT 1 AS one)`);
      expect(await views()).toContain('made_over_http');
      await client.query(`CREATE VIEW pa.made_here AS (SELECT 2 AS two)`);
      expect(await views()).toEqual(expect.arrayContaining(['made_here', 'made_over_http']));
      await sql(`DROP VIEW pa.made_over_http`);
      await client.query(`DROP VIEW pa.made_here`);
      expect(await views()).toEqual(['numbers', 'skill_names']);
    } finally {
      await client.end();
    }
  });

  it('when the MySQL door lists the tables (SHOW FULL TABLES) and their columns, then it agrees with information_schema', async () => {
    const [shown] = await mysqlClient.query<mysql.RowDataPacket[]>({
      sql: 'SHOW FULL TABLES FROM pa',
      rowsAsArray: true,
    });
    expect(shown).toContainEqual(['numbers', 'VIEW']);
    expect(shown).toContainEqual(['skill_names', 'VIEW']);
    expect(shown).toContainEqual(['notes', 'BASE TABLE']);
    const [columns] = await mysqlClient.query<mysql.RowDataPacket[]>({
      sql: "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'pa' AND TABLE_NAME = 'numbers' ORDER BY ORDINAL_POSITION",
      rowsAsArray: true,
    });
    const [fields] = await mysqlClient.query<mysql.RowDataPacket[]>({
      sql: 'SHOW COLUMNS FROM pa.numbers',
      rowsAsArray: true,
    });
    expect(columns).toEqual([['one'], ['letter'], ['ratio']]);
    expect(fields.map((f) => [f[0]])).toEqual(columns);
  });
});
