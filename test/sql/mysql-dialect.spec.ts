import fc from 'fast-check';
import mysql from 'mysql2/promise';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshPostgresData, mariadbParameters } from '../support/external';
import { givenSkill, uniqueName } from '../support/world';
import { startFront, type Front } from '../mysql/support';

// What SQL tools and MindsDB's clients send besides plain SELECTs: MySQL's connection variables,
// SHOW VARIABLES / SHOW COLUMNS, and MySQL's date functions, over HTTP as over the MySQL door.
describe.each(storeKinds)('MySQL dialect over the HTTP SQL endpoint on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t.dispose());

  it('answers @@ system variables and connection functions, each column named as written', async () => {
    const answer = await querySql(
      t,
      'SELECT @@version, @@session.autocommit, @@GLOBAL.sql_mode, DATABASE(), @@version_comment AS c',
    );
    expect(answer).toMatchObject({
      type: 'table',
      column_names: ['@@version', '@@session.autocommit', '@@GLOBAL.sql_mode', 'DATABASE()', 'c'],
      data: [
        [expect.stringMatching(/^8\.0\.17-mindledger/), 1, 'ANSI_QUOTES', 'mindsdb', expect.any(String)],
      ],
    });
  });

  it('writes @@ values into a statement the engine runs (with rows from the read model)', async () => {
    const project = uniqueName('dialect');
    await t.http.post('/api/projects').send({ name: project }).expect(201);
    const skill = await givenSkill(t, project, { name: uniqueName('lookup') });
    const answer = await querySql(
      t,
      `SELECT name, @@version_comment AS server, DATABASE() AS db FROM skills WHERE name = '${skill.name}'`,
      { context: { db: project } },
    );
    expect(answer).toMatchObject({
      type: 'table',
      data: [[skill.name, 'mindledger (MindsDB-compatible)', project]],
    });
  });

  it('SHOW VARIABLES honours LIKE and WHERE', async () => {
    const like = await querySql(t, "SHOW VARIABLES LIKE 'version%'");
    expect(like.column_names).toEqual(['Variable_name', 'Value']);
    const names = like.data!.map((r) => r[0]);
    expect(names.length).toBeGreaterThan(1);
    expect(names.every((n) => typeof n === 'string' && n.startsWith('version'))).toBe(true);
    const where = await querySql(t, "SHOW SESSION VARIABLES WHERE Variable_name = 'autocommit'");
    expect(where.data).toEqual([['autocommit', '1']]);
  });

  it('SHOW [FULL] COLUMNS FROM a table of a project, of files and of an external database', async () => {
    const cols = await querySql(t, 'SHOW COLUMNS FROM skills FROM mindsdb');
    expect(cols.column_names).toEqual(['Field', 'Type', 'Null', 'Key', 'Default', 'Extra']);
    expect(cols.data!.map((r) => r[0])).toEqual(['NAME', 'PROJECT', 'TYPE', 'PARAMS']);
    const full = await querySql(t, "SHOW FULL COLUMNS FROM mindsdb.skills LIKE 'P%'");
    expect(full.column_names).toContain('Collation');
    expect(full.data!.map((r) => r[0])).toEqual(['PROJECT', 'PARAMS']);

    const source = await freshPostgresData([
      'CREATE TABLE sales (id integer, region text, amount numeric(10,2), sold_on date)',
    ]);
    try {
      const db = uniqueName('pgsrc');
      await t.http
        .post('/api/databases')
        .send({ database: { name: db, engine: 'postgres', parameters: source.parameters } })
        .expect(201);
      const external = await querySql(t, `SHOW COLUMNS FROM ${db}.sales`);
      // The types a SELECT of the table answers with (integers and numerics read as BIGINT and DOUBLE).
      expect(external.data!.map((r) => [r[0], r[1]])).toEqual([
        ['id', 'bigint'],
        ['region', 'text'],
        ['amount', 'double'],
        ['sold_on', 'date'],
      ]);

      // information_schema.COLUMNS lists the external database's columns beside ours, typed as
      // SHOW COLUMNS and a SELECT of the table type them (the engine's types, as every relation's).
      const listed = await querySql(
        t,
        `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, IS_NULLABLE
           FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN ('${db}', 'mindsdb') AND TABLE_NAME IN ('sales', 'skills')
           ORDER BY TABLE_SCHEMA = 'mindsdb', ORDINAL_POSITION`,
      );
      expect(listed.data).toEqual([
        [db, 'sales', 'id', 1, 'BIGINT', 'YES'],
        [db, 'sales', 'region', 2, 'VARCHAR', 'YES'],
        [db, 'sales', 'amount', 3, 'DOUBLE', 'YES'],
        [db, 'sales', 'sold_on', 4, 'DATE', 'YES'],
        ['mindsdb', 'skills', 'NAME', 1, expect.any(String), 'YES'],
        ['mindsdb', 'skills', 'PROJECT', 2, expect.any(String), 'YES'],
        ['mindsdb', 'skills', 'TYPE', 3, expect.any(String), 'YES'],
        ['mindsdb', 'skills', 'PARAMS', 4, expect.any(String), 'YES'],
      ]);
    } finally {
      await source.drop();
    }
  });

  it('information_schema.COLUMNS still answers when a registered database is down (its columns left out)', async () => {
    const source = await freshPostgresData(['CREATE TABLE gone (id integer)']);
    const db = uniqueName('pgdown');
    await t.http
      .post('/api/databases')
      .send({ database: { name: db, engine: 'postgres', parameters: source.parameters } })
      .expect(201);
    await source.drop();
    const listed = await querySql(
      t,
      `SELECT TABLE_SCHEMA, COUNT(*) AS n FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN ('${db}', 'mindsdb') GROUP BY 1`,
    );
    expect(listed).toMatchObject({ type: 'table', data: [['mindsdb', expect.any(Number)]] });
    // Reading the database itself still says what is wrong.
    const direct = await querySql(t, `SELECT * FROM ${db}.gone`);
    expect(direct.type).toBe('error');
  });

  it('DESCRIBE of a table that is not a model lists its columns as MySQL does', async () => {
    const described = await querySql(t, 'DESCRIBE mindsdb.skills');
    const shown = await querySql(t, 'SHOW COLUMNS FROM mindsdb.skills');
    expect(described.column_names).toEqual(['Field', 'Type', 'Null', 'Key', 'Default', 'Extra']);
    expect(described.data).toEqual(shown.data);
    expect((await querySql(t, 'DESC skills', { context: { db: 'mindsdb' } })).data).toEqual(shown.data);
    const missing = await querySql(t, 'DESCRIBE mindsdb.no_such_thing');
    expect(missing).toMatchObject({ type: 'error', error_code: 1146 });
    expect(missing.error_message).toMatch(/No model or table is called no_such_thing in mindsdb/);
  });

  it('a table that does not exist is named in the error', async () => {
    const answer = await querySql(t, 'SHOW COLUMNS FROM mindsdb.no_such_table');
    expect(answer.type).toBe('error');
    expect(answer.error_message).toMatch(/no_such_table/);
  });

  it('has MySQL date functions: CURDATE, UNIX_TIMESTAMP, FROM_UNIXTIME, STR_TO_DATE', async () => {
    const answer = await querySql(
      t,
      "SELECT CURDATE() = current_date AS today, UNIX_TIMESTAMP('2026-01-01 00:00:00') AS epoch, " +
        "FROM_UNIXTIME(1767225600) AS back, FROM_UNIXTIME(1767225600, '%Y/%c') AS formatted, " +
        "STR_TO_DATE('3/1/2026 5:06', '%e/%c/%Y %k:%i') AS parsed",
    );
    expect(answer).toMatchObject({
      type: 'table',
      data: [[true, 1767225600, '2026-01-01 00:00:00.000000', '2026/1', '2026-01-03 05:06:00.000000']],
    });
  });
});

// DATE_FORMAT's specifiers, checked against the real MariaDB on generated instants and formats.
describe('DATE_FORMAT agrees with MariaDB', () => {
  let t: TestApp;
  let maria: mysql.Connection;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    maria = await mysql.createConnection(mariadbParameters());
  });
  afterAll(async () => {
    await maria.end();
    await t.dispose();
  });

  // Every specifier whose meaning strftime shares (the week-numbering ones differ and are left out).
  const specifier = fc.constantFrom(
    ...['a', 'b', 'c', 'd', 'e', 'f', 'H', 'h', 'I', 'i', 'j', 'k', 'l', 'M', 'm', 'p', 'r', 'S', 's', 'T'],
    ...['W', 'w', 'Y', 'y', '%'],
  );
  const piece = fc.oneof(
    specifier.map((s) => `%${s}`),
    fc.constantFrom('-', ' ', ':', '/', 'at ', ', '),
  );
  const instant = fc
    .date({
      min: new Date('1971-01-01T00:00:00Z'),
      max: new Date('2099-12-31T23:59:59Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString().replace('T', ' ').replace('Z', '').slice(0, 23));

  it('formats any instant with any format as MariaDB does', async () => {
    await fc.assert(
      fc.asyncProperty(instant, fc.array(piece, { minLength: 1, maxLength: 8 }), async (at, pieces) => {
        const format = pieces.join('');
        const [rows] = await maria.query('SELECT DATE_FORMAT(?, ?) AS f', [at, format]);
        const expected = (rows as { f: string }[])[0]!.f;
        const ours = await querySql(t, `SELECT DATE_FORMAT('${at}', '${format}') AS f`);
        expect(ours).toMatchObject({ type: 'table', data: [[expected]] });
      }),
      { seed: 20261123, numRuns: 60 },
    );
  });
});

describe('MySQL date functions through the MySQL door', () => {
  let front: Front;
  beforeAll(async () => {
    front = await startFront({});
  });
  afterAll(() => front.dispose());

  it('DATE_FORMAT with a double-quoted format, as the mysql CLI sends it', async () => {
    const out = await front.cli(`SELECT DATE_FORMAT('2026-11-23 08:05:09', "%W %e %M %Y, %l:%i %p") AS f`);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout.trim().split('\n')).toEqual(['f', 'Monday 23 November 2026, 8:05 AM']);
  });
});
