/**
 * psql's meta-commands read PostgreSQL's catalogs: the door answers them from a shadow of what the
 * engine lists (src/pgwire/catalog/shadowCatalog.ts), so `\dt`, `\d name`, `\dn` and `\l` show the
 * service's projects, tables and columns, and nothing of the shadow's own machinery.
 */
import { execFile } from 'node:child_process';
import pino from 'pino';
import { catalogText } from '../../src/pgwire/catalog/shadowCatalog';
import { startPgServer, type PgServer } from '../../src/pgwire';
import { startTestApp, type TestApp } from '../support/app';

const psql = (port: number, command: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'psql',
      [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'analyst',
        '-d',
        'mindsdb',
        '-X',
        '-A',
        '-t',
        '-c',
        command,
      ],
      { env: { ...process.env, PGCONNECT_TIMEOUT: '10', PGSSLMODE: 'disable' }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

const lines = (out: string) => out.split('\n').filter((l) => l.length > 0);

describe("psql's meta-commands over the PostgreSQL door", () => {
  let app: TestApp;
  let server: PgServer;

  beforeAll(async () => {
    app = await startTestApp('sqlite');
    server = await startPgServer({
      engine: {
        execute: (q, c, p, s) => app.running.sql.execute(q, c, p, s),
        stream: (q, c, p, s) => app.running.sql.stream(q, c, p, s),
      },
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
    });
    await app.http.post('/api/projects').send({ name: 'shop' }).expect(201);
  }, 60_000);

  afterAll(async () => {
    await server.close(0);
    await app.dispose();
  });

  it('given a project, when psql runs \\dt, then every project lists its tables, and the shadow adds none of its own', async () => {
    const { code, stdout, stderr } = await psql(server.port, '\\dt');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const rows = lines(stdout).map((l) => l.split('|'));
    expect(rows).toContainEqual(['shop', 'skills', 'table', 'mindledger']);
    expect(rows).toContainEqual(['mindsdb', 'models', 'table', 'mindledger']);
    expect(rows.filter((r) => r[0] === 'pg_mindledger' || r[0] === 'main')).toEqual([]);
    // The listing is the engine's: each of shop's tables comes from information_schema.TABLES.
    const engine = await app.running.sql.execute(
      "SELECT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop' GROUP BY 1",
      {},
      {},
    );
    const shopTables = rows.filter((r) => r[0] === 'shop').map((r) => r[1]);
    expect(engine.type).toBe('table');
    expect(shopTables.sort()).toEqual(
      (engine as { data: unknown[][] }).data.map((r) => String(r[0]).toLowerCase()).sort(),
    );
  });

  it("when psql describes a table (\\d shop.skills), then it shows the engine's columns in order, with PostgreSQL types", async () => {
    const { code, stdout, stderr } = await psql(server.port, '\\d shop.skills');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const described = lines(stdout)
      .map((l) => l.split('|'))
      .map((r) => [r[0], r[1]]);
    const engine = (await app.running.sql.execute(
      "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'skills' ORDER BY ORDINAL_POSITION",
      {},
      {},
    )) as { data: unknown[][] };
    expect(described.map((r) => r[0])).toEqual(engine.data.map((r) => r[0]));
    expect(described.find((r) => r[0] === 'NAME')?.[1]).toBe('varchar');
  });

  it('when psql lists schemas (\\dn) and databases (\\l), then projects are both, and a project made meanwhile shows up', async () => {
    await app.http.post('/api/projects').send({ name: 'later' }).expect(201);
    const schemas = lines((await psql(server.port, '\\dn')).stdout).map((l) => l.split('|')[0]);
    expect(schemas).toEqual(expect.arrayContaining(['files', 'mindsdb', 'shop', 'later']));
    expect(schemas).not.toContain('pg_mindledger');
    expect(schemas).not.toContain('main');
    const databases = lines((await psql(server.port, '\\l')).stdout).map((l) => l.split('|')[0]);
    expect(databases).toEqual(expect.arrayContaining(['mindsdb', 'shop', 'later']));
  });

  it("when SQLAlchemy reflects a table's columns (Superset's schema browser), then it gets the engine's columns and types", async () => {
    // SQLAlchemy 2.0's PostgreSQL dialect, get_multi_columns, as it sends it.
    const reflection = [
      'SELECT pg_catalog.pg_class.relname, pg_catalog.pg_attribute.attname AS name, pg_catalog.fo',
      'rmat_type(pg_catalog.pg_attribute.atttypid, pg_catalog.pg_attribute.atttypmod) AS format_t',
      'ype, (SELECT pg_catalog.pg_get_expr(pg_catalog.pg_attrdef.adbin, pg_catalog.pg_attrdef.adr',
      'elid) AS pg_get_expr_1 FROM pg_catalog.pg_attrdef WHERE pg_catalog.pg_attrdef.adrelid = pg',
      '_catalog.pg_attribute.attrelid AND pg_catalog.pg_attrdef.adnum = pg_catalog.pg_attribute.a',
      'ttnum AND pg_catalog.pg_attribute.atthasdef) AS "default", pg_catalog.pg_attribute.attnotn',
      'ull AS not_null, pg_catalog.pg_class.relname AS table_name, pg_catalog.pg_description.desc',
      'ription AS comment, pg_catalog.pg_attribute.attgenerated AS generated, (SELECT json_build_',
      "object('always', pg_catalog.pg_attribute.attidentity = 'a', 'start', pg_catalog.pg_sequenc",
      "e.seqstart, 'increment', pg_catalog.pg_sequence.seqincrement, 'minvalue', pg_catalog.pg_se",
      "quence.seqmin, 'maxvalue', pg_catalog.pg_sequence.seqmax, 'cache', pg_catalog.pg_sequence.",
      "seqcache, 'cycle', pg_catalog.pg_sequence.seqcycle) AS json_build_object_1 FROM pg_catalog",
      ".pg_sequence WHERE pg_catalog.pg_attribute.attidentity != '' AND pg_catalog.pg_sequence.se",
      'qrelid = CAST(CAST(pg_catalog.pg_get_serial_sequence(CAST(CAST(pg_catalog.pg_attribute.att',
      'relid AS REGCLASS) AS TEXT), pg_catalog.pg_attribute.attname) AS REGCLASS) AS OID)) AS ide',
      'ntity_options FROM pg_catalog.pg_class LEFT OUTER JOIN pg_catalog.pg_attribute ON pg_catal',
      'og.pg_class.oid = pg_catalog.pg_attribute.attrelid AND pg_catalog.pg_attribute.attnum > 0 ',
      'AND NOT pg_catalog.pg_attribute.attisdropped LEFT OUTER JOIN pg_catalog.pg_description ON ',
      'pg_catalog.pg_description.objoid = pg_catalog.pg_attribute.attrelid AND pg_catalog.pg_desc',
      'ription.objsubid = pg_catalog.pg_attribute.attnum JOIN pg_catalog.pg_namespace ON pg_catal',
      'og.pg_namespace.oid = pg_catalog.pg_class.relnamespace WHERE pg_catalog.pg_class.relkind =',
      " ANY (ARRAY['r', 'p', 'f', 'v', 'm']) AND pg_catalog.pg_table_is_visible(pg_catalog.pg_cla",
      "ss.oid) AND pg_catalog.pg_namespace.nspname = 'shop' AND pg_catalog.pg_class.relname IN ('",
      "skills') ORDER BY pg_catalog.pg_class.relname, pg_catalog.pg_attribute.attnum",
    ].join('');
    const { code, stdout, stderr } = await psql(server.port, reflection);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const columns = lines(stdout).map((l) => l.split('|').slice(0, 3));
    const engine = (await app.running.sql.execute(
      "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'skills' ORDER BY ORDINAL_POSITION",
      {},
      {},
    )) as { data: unknown[][] };
    expect(columns).toEqual(engine.data.map((r) => ['skills', r[0], 'varchar']));
  });

  it('given a catalog query that reaches for the machine (files, attaching), then it is refused and nothing is read', async () => {
    const read = await psql(
      server.port,
      "SELECT content FROM read_text('/etc/hostname'), pg_catalog.pg_namespace LIMIT 1",
    );
    expect(read.code).not.toBe(0);
    expect(read.stdout).toBe('');
    expect(read.stderr).toMatch(/file system operations are disabled/);
    const again = await psql(server.port, "SELECT count(*) FROM glob('/etc/*'), pg_catalog.pg_namespace");
    expect(again.stderr).toMatch(/file system operations are disabled/);
  });

  it('reads PostgreSQL-only catalog syntax as DuckDB runs it: qualified operators, collations, object-identifier casts', () => {
    const squeezed = (s: string) => s.replace(/\s+/g, ' ').trim();
    expect(squeezed(catalogText("c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default"))).toBe(
      "c.relname ~ '^(t)$'",
    );
    expect(catalogText('c.reloftype::pg_catalog.regtype::pg_catalog.text')).toBe(
      'c.reloftype::VARCHAR::text',
    );
    expect(catalogText('pg_catalog.pg_get_userbyid(c.relowner), pg_catalog.pg_class, pg_catalog.pg_am')).toBe(
      'pg_get_userbyid(c.relowner), pg_class, pg_catalog.pg_am',
    );
  });
});
