import http from 'node:http';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { eventsOf, givenProject, givenSkill, uniqueName } from '../support/world';

/** Statements the SQL endpoint refuses: reads of the host, writes to the read model, settings. */
const refusedStatements: [string, number, RegExp][] = [
  ["SELECT * FROM read_csv('/etc/passwd')", 1227, /read_csv/],
  ["SELECT read_text('/etc/passwd')", 1227, /read_text/],
  ["SELECT * FROM read_text('/etc/passwd')", 1227, /read_text/],
  ["SELECT * FROM glob('/etc/*')", 1227, /glob/],
  ["SELECT * FROM query('SELECT 1')", 1227, /query/],
  ['SELECT * FROM duckdb_settings()', 1227, /duckdb_settings/],
  ["SELECT current_setting('allowed_directories')", 1227, /current_setting/],
  ["SELECT getenv('HOME')", 1227, /getenv/],
  ["COPY (SELECT 1) TO '/tmp/mindledger-leak.csv'", 1227, /COPY/],
  ["EXPORT DATABASE '/tmp/mindledger-export'", 1227, /EXPORT/],
  ["ATTACH '/tmp/mindledger.db' AS x", 1227, /ATTACH/],
  ['INSTALL httpfs', 1227, /INSTALL/],
  ['LOAD httpfs', 1227, /LOAD/],
  ['PRAGMA database_list', 1227, /PRAGMA/],
  ['SET enable_external_access = true', 1227, /enable_external_access/],
  ["SET allowed_directories = ['/']", 1227, /allowed_directories/],
  ['SET threads = 1', 1227, /threads/],
  ['INSERT INTO mindsdb.skills VALUES (1)', 1227, /INSERT/],
  ['DELETE FROM mindsdb.skills', 1227, /DELETE/],
  ["UPDATE mindsdb.skills SET NAME = 'x'", 1227, /UPDATE/],
  ['DROP TABLE skills', 1227, /DROP/],
  ['ALTER TABLE skills ADD COLUMN x INT', 1227, /ALTER/],
  ['CREATE TABLE x (a INT)', 1227, /CREATE/],
  ['CREATE MACRO m() AS 1', 1227, /CREATE/],
  ['SELECT * FROM main.skills', 1049, /main/],
  ['SELECT * FROM mdb_information_schema.SKILLS', 1049, /mdb_information_schema/],
  ['SELECT * FROM pg_catalog.pg_tables', 1049, /pg_catalog/],
];

describe('SQL endpoint', () => {
  let t: TestApp;
  const sql = (query: string, extra: Parameters<typeof querySql>[2] = {}) => querySql(t, query, extra);
  const table = async (query: string, extra = {}) => {
    const a = await sql(query, extra);
    if (a.type !== 'table') throw new Error(`expected a table for ${query}, got ${JSON.stringify(a)}`);
    return a;
  };
  const error = async (query: string, extra = {}) => {
    const a = await sql(query, extra);
    expect(a.type).toBe('error');
    return a;
  };
  const ok = async (query: string) => expect((await sql(query)).type).toBe('ok');

  beforeAll(async () => {
    // SQL_TIMEOUT_MS as deployed (30 s): at load 20 a SHOW TABLES took longer than the 2 s this
    // app once had. The time limit is proven on an app of its own ('the SQL time limit', below).
    t = await startTestApp('sqlite', { SQL_ROW_LIMIT: '50' });
  });
  afterAll(() => t?.dispose());

  describe('request and response', () => {
    it('answers 400 naming a missing query', async () => {
      const missing = await t.http.post('/api/sql/query').send({}).expect(400);
      expect(missing.body.detail).toMatch(/^body\.query: Please provide "query"/);
    });

    it('answers 400 for a query that is not a string', async () => {
      await t.http.post('/api/sql/query').send({ query: 5 }).expect(400);
    });

    it('answers 415 for a body that is not JSON', async () => {
      await t.http.post('/api/sql/query').set('Content-Type', 'text/plain').send('select 1').expect(415);
    });

    it('names columns as MindsDB: alias, else the expression text; MySQL quoting works', async () => {
      const a = await table(
        ' \n  select 1, \'a\', 1 as `2`, 1 "3", "a" as b, `x`.`y` from (select 5 as y) as `x`;;',
      );
      expect(a.column_names).toEqual(['1', 'a', '2', '3', 'b', 'y']);
      expect(a.data).toEqual([[1, 'a', 1, 1, 'a', 5]]);
      expect(a.context).toEqual({ db: 'mindsdb' });
    });

    it('serialises every value type as valid JSON', async () => {
      const a =
        await table(`SELECT 9007199254740993::BIGINT AS big, 42::BIGINT AS small, 12.34::DECIMAL(10,2) AS dec,
        'nan'::DOUBLE AS nan, 'inf'::DOUBLE AS inf, 1.5::DOUBLE AS dbl, DATE '2024-01-02' AS d,
        TIMESTAMP '2024-01-02 03:04:05' AS ts, TIMESTAMP '2024-01-02 03:04:05.123456' AS tsu,
        [1, 2] AS l, {'x': 1, 'y': 'z'} AS s, MAP {'k': 1} AS m, '\\xAA\\xBB'::BLOB AS b, true AS t, NULL AS n,
        170141183460469231731687303715884105727::HUGEINT AS huge`);
      expect(a.data![0]).toEqual([
        '9007199254740993',
        42,
        12.34,
        null,
        null,
        1.5,
        '2024-01-02',
        '2024-01-02 03:04:05.000000',
        '2024-01-02 03:04:05.123456',
        [1, 2],
        { x: 1, y: 'z' },
        { k: 1 },
        Buffer.from([0xaa, 0xbb]).toString('base64'),
        true,
        null,
        '170141183460469231731687303715884105727',
      ]);
      expect(a.column_types).toEqual([
        'BIGINT',
        'BIGINT',
        'DECIMAL(10,2)',
        'DOUBLE',
        'DOUBLE',
        'DOUBLE',
        'DATE',
        'TIMESTAMP',
        'TIMESTAMP',
        'INTEGER[]',
        'STRUCT("x" INTEGER, "y" VARCHAR)',
        'MAP(VARCHAR, INTEGER)',
        'BLOB',
        'BOOLEAN',
        'INTEGER',
        'HUGEINT',
      ]);
    });

    it('binds :name and @name parameters', async () => {
      expect(
        (await table('SELECT :a + @b AS s, :name AS n', { params: { a: 2, b: 3, name: "o'brien" } })).data,
      ).toEqual([[5, "o'brien"]]);
    });

    it('binds a list parameter', async () => {
      expect(
        (await table('SELECT x FROM range(10) t(x) WHERE x IN :ids ORDER BY x', { params: { ids: [2, 5] } }))
          .data,
      ).toEqual([[2], [5]]);
    });

    it('never splices a value into the text: an injection attempt is just a string', async () => {
      expect((await table('SELECT :v AS v', { params: { v: "1'; DROP TABLE skills; --" } })).data).toEqual([
        ["1'; DROP TABLE skills; --"],
      ]);
    });

    it('names a missing parameter (1318)', async () => {
      const missing = await error('SELECT :nope');
      expect(missing).toMatchObject({ error_code: 1318, error_message: expect.stringContaining('nope') });
      // DuckDB's own `$name`, which nothing binds, is the same mistake, not an engine failure (1105).
      expect(await error('SELECT $nope')).toMatchObject({
        error_code: 1318,
        error_message: expect.stringContaining('nope'),
      });
      // Even with `nope` in params: the answer names the spellings that are bound.
      expect(await error('SELECT $nope', { params: { nope: 1 } })).toMatchObject({
        error_code: 1318,
        error_message: expect.stringMatching(/nope.*:name or @name/s),
      });
    });

    it("answers values the statement's own functions refuse as invalid input (1210), not an engine failure", async () => {
      expect(await error("SELECT json('{not json')")).toMatchObject({
        error_code: 1210,
        error_message: expect.stringMatching(/^Invalid Input Error/),
      });
      expect(await error('SELECT 9223372036854775807::BIGINT + 1')).toMatchObject({
        error_code: 1210,
        error_message: expect.stringMatching(/^Out of Range Error/),
      });
    });

    it('never serves random() or now() from the answer cache', async () => {
      const a = await table('SELECT random() AS r, now() AS t');
      const b = await table('SELECT random() AS r, now() AS t');
      expect(a.data![0]![0]).not.toEqual(b.data![0]![0]);
    });

    it('never serves a sampled query from the answer cache', async () => {
      const sampled = new Set<string>();
      for (let i = 0; i < 5; i++)
        sampled.add(JSON.stringify((await table('SELECT * FROM range(1000) USING SAMPLE 5')).data));
      expect(sampled.size).toBeGreaterThan(1);
    });

    describe('the answer cache', () => {
      const countSkills = (project: string) =>
        table(`SELECT count(*) AS n FROM information_schema.skills WHERE PROJECT = '${project}'`);

      it('answers a repeated query the same way', async () => {
        const { name: project } = await givenProject(t);
        await givenSkill(t, project, { name: 'present', type: 'x' });
        const before = await countSkills(project);
        expect(before.data).toEqual([[1]]);
        expect((await countSkills(project)).data).toEqual(before.data);
      });

      it('answers a changed table at once', async () => {
        const { name: project } = await givenProject(t);
        const before = await countSkills(project);
        await givenSkill(t, project, { name: 'cache_probe', type: 'x' });
        const after = await countSkills(project);
        expect(after.data![0]![0]).toBe((before.data![0]![0] as number) + 1);
      });

      it('answers the same query in another text (a comment, MySQL quoting) as the first, and a changed table at once', async () => {
        const { name: project } = await givenProject(t);
        const first = await countSkills(project);
        const again = await table(
          `SELECT count(*) AS n FROM information_schema.skills WHERE PROJECT = "${project}" /* request 1 */`,
        );
        expect(again.data).toEqual(first.data);
        await givenSkill(t, project, { name: 'cache_probe_2', type: 'x' });
        const after = await table(
          `SELECT count(*) AS n FROM information_schema.skills WHERE PROJECT = "${project}" /* request 2 */`,
        );
        expect(after.data![0]![0]).toBe((first.data![0]![0] as number) + 1);
      });

      it('keeps an answer cut at SQL_ROW_LIMIT from reads with other limits (training), and theirs from it', async () => {
        const cutFirst = 'SELECT * FROM range(120) AS r(i)';
        expect(await table(cutFirst)).toMatchObject({ truncated: true, data: expect.any(Array) });
        expect(await t.running.sql.queryRows('mindsdb', cutFirst)).toHaveLength(120);
        const trainedFirst = 'SELECT * FROM range(130) AS r(i)';
        expect(await t.running.sql.queryRows('mindsdb', trainedFirst)).toHaveLength(130);
        const cut = await table(trainedFirst);
        expect(cut.data).toHaveLength(50);
        expect(cut.truncated).toBe(true);
      });
    });

    it('cuts answers at the row limit and says so', async () => {
      const a = await table('SELECT * FROM range(1000)');
      expect(a.data).toHaveLength(50);
      expect(a.truncated).toBe(true);
      expect((await table('SELECT * FROM range(10)')).truncated).toBeUndefined();
    });

    describe('errors, with stable codes', () => {
      it('answers 1064 for a syntax error, echoing the context', async () => {
        expect(await error('selec 1', { context: { db: 'mindsdb', x: 1 } })).toMatchObject({
          error_code: 1064,
          context: { db: 'mindsdb', x: 1 },
        });
      });

      it('answers 1049 for an unknown database', async () => {
        expect(await error('SELECT * FROM nope.skills')).toMatchObject({
          error_code: 1049,
          error_message: 'Database nope does not exist',
        });
      });

      it('answers 1146 for an unknown table', async () => {
        expect(await error('SELECT * FROM mindsdb.nope')).toMatchObject({
          error_code: 1146,
          error_message: expect.stringContaining('mindsdb.nope'),
        });
      });

      it('answers 1054 for an unknown column, quoting the query', async () => {
        expect(await error('SELECT no_such_column FROM mindsdb.skills')).toMatchObject({
          error_code: 1054,
          error_message: expect.stringMatching(/no_such_column[\s\S]*FROM mindsdb\.skills/),
        });
      });

      it('answers 1064 for more than one statement', async () => {
        expect(await error('select 1; select 2')).toMatchObject({ error_code: 1064 });
      });
    });
  });

  describe('context and USE', () => {
    it('switches context.db with USE to a database that exists', async () => {
      expect(await sql('USE information_schema')).toEqual({
        type: 'ok',
        affected_rows: null,
        context: { db: 'information_schema' },
      });
    });

    it('refuses USE of an unknown database (1049), keeping the context', async () => {
      expect(await error('USE nowhere', { context: { db: 'mindsdb' } })).toMatchObject({
        error_code: 1049,
        context: { db: 'mindsdb' },
      });
    });

    it('resolves bare names in the context database, and only there', async () => {
      const a = await table('SELECT NAME FROM databases', { context: { db: 'information_schema' } });
      expect(a.data).toContainEqual(['mindsdb']);
      expect(await error('SELECT * FROM databases')).toMatchObject({ error_code: 1146 });
    });
  });

  describe('safety', () => {
    it.each(refusedStatements)('refuses %s', async (query, code, message) => {
      const a = await error(query);
      expect(a.error_code).toBe(code);
      expect(a.error_message).toMatch(message);
    });

    it('leaves the projections unchanged after refusing all of those', async () => {
      for (const [query] of refusedStatements) await error(query);
      expect(
        await t.running.ctx.duck.query(
          "SELECT count(*)::INTEGER AS n FROM duckdb_tables() WHERE table_name = 'x'",
        ),
      ).toEqual([{ n: 0 }]);
      expect(
        (await table('SELECT count(*) FROM information_schema.databases')).data![0]![0],
      ).toBeGreaterThanOrEqual(3);
    });

    it('accepts the session variables MySQL clients set', async () => {
      for (const q of [
        'SET NAMES utf8mb4',
        'SET autocommit = 1',
        "SET @@session.sql_mode = 'ANSI'",
        'SET character_set_client = utf8',
      ])
        expect((await sql(q)).type).toBe('ok');
    });
  });

  describe('MindsDB statements and REST round trips', () => {
    /**
     * The world the statements act on, made in SQL as a client would: a project, a PostgreSQL
     * integration (password sql-secret-1), a sql skill `sql_s`, an agent `helper` using it (key
     * sk-sql) and, unless told otherwise, its running chatbot `bot`. Names are the test's own: databases and projects share
     * one namespace across the app.
     */
    const givenSqlWorld = async ({ withChatbot = true } = {}) => {
      const project = uniqueName('sales');
      const database = uniqueName('chat_db');
      await ok(`CREATE PROJECT ${project}`);
      await ok(
        `CREATE DATABASE ${database} WITH ENGINE = 'postgres', PARAMETERS = {"host": "127.0.0.1", "port": 5432, "user": "postgres", "password": "sql-secret-1", "database": "postgres"}`,
      );
      await ok(
        `CREATE SKILL ${project}.sql_s USING type = 'sql', database = '${database}', tables = ['orders', 'items'], description = 'Orders'`,
      );
      await ok(
        `CREATE AGENT ${project}.helper USING model = {"provider": "openai", "model_name": "gpt-4o", "api_key": "sk-sql"}, skills = ['sql_s', {'name': 'sql_s', 'tables': ['orders']}], prompt_template = 'Answer', timeout = 300, enabled = true`,
      );
      if (withChatbot)
        await ok(
          `CREATE CHATBOT ${project}.bot USING database = '${database}', agent = 'helper', greeting = 'hi'`,
        );
      return { project, database };
    };

    /** The SQL world plus `rest_s`, a skill made over REST with a secret token. */
    const givenSqlWorldWithRestSkill = async () => {
      const world = await givenSqlWorld();
      await givenSkill(t, world.project, { name: 'rest_s', type: 'custom', params: { token: 'tok-123' } });
      return world;
    };

    describe('creating', () => {
      it('CREATE PROJECT IF NOT EXISTS succeeds whether or not the project exists', async () => {
        const project = uniqueName('sales');
        expect((await sql(`CREATE PROJECT IF NOT EXISTS ${project}`)).type).toBe('ok');
        expect((await sql(`CREATE PROJECT IF NOT EXISTS ${project}`)).type).toBe('ok');
        expect((await t.http.get(`/api/projects/${project}`).expect(200)).body.name).toBe(project);
      });

      it('refuses CREATE PROJECT of a name that exists (1062)', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        expect(await error(`CREATE PROJECT ${project}`)).toMatchObject({ error_code: 1062 });
      });

      it('refuses CREATE PROJECT of an invalid name (1210)', async () => {
        expect(await error('CREATE PROJECT `9bad`')).toMatchObject({ error_code: 1210 });
      });

      it('CREATE DATABASE registers an integration, visible over REST with its password masked', async () => {
        const database = uniqueName('chat_db');
        expect(
          (
            await sql(
              `CREATE DATABASE ${database} WITH ENGINE = 'postgres', PARAMETERS = {"host": "127.0.0.1", "port": 5432, "user": "postgres", "password": "sql-secret-1", "database": "postgres"}`,
            )
          ).type,
        ).toBe('ok');
        expect(
          (await t.http.get(`/api/databases/${database}`).expect(200)).body.connection_data.password,
        ).toBe('******');
      });

      it('CREATE DATABASE without an engine creates a project', async () => {
        const project = uniqueName('proj_by_db');
        expect((await sql(`CREATE DATABASE ${project}`)).type).toBe('ok');
        expect((await t.http.get(`/api/projects/${project}`).expect(200)).body.name).toBe(project);
      });

      it('CREATE SKILL creates a skill, visible over REST', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        expect(
          (
            await sql(
              `CREATE SKILL ${project}.sql_s USING type = 'sql', database = 'chat_db', tables = ['orders', 'items'], description = 'Orders'`,
            )
          ).type,
        ).toBe('ok');
        const skill = (await t.http.get(`/api/projects/${project}/skills/sql_s`).expect(200)).body;
        expect(skill).toMatchObject({
          type: 'sql',
          params: { database: 'chat_db', tables: ['orders', 'items'], description: 'Orders' },
        });
      });

      it('refuses CREATE SKILL of a sql skill without a database (1210)', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        expect(await error(`CREATE SKILL ${project}.bad USING type = 'sql', tables = ['x']`)).toMatchObject({
          error_code: 1210,
          error_message: expect.stringMatching(/database/),
        });
      });

      it('CREATE AGENT creates an agent with its skills, visible over REST, key masked', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        await givenSkill(t, project, { name: 'sql_s', type: 'sql', params: { database: 'chat_db' } });
        expect(
          (
            await sql(
              `CREATE AGENT ${project}.helper USING model = {"provider": "openai", "model_name": "gpt-4o", "api_key": "sk-sql"}, skills = ['sql_s', {'name': 'sql_s', 'tables': ['orders']}], prompt_template = 'Answer', timeout = 300, enabled = true`,
            )
          ).type,
        ).toBe('ok');
        const agent = (await t.http.get(`/api/projects/${project}/agents/helper`).expect(200)).body;
        expect(agent).toMatchObject({
          skills: [expect.objectContaining({ name: 'sql_s' })],
          skills_extra_parameters: { sql_s: { tables: ['orders'] } },
          params: {
            model: { provider: 'openai', model_name: 'gpt-4o', api_key: '******' },
            prompt_template: 'Answer',
            timeout: 300,
            enabled: true,
          },
        });
      });

      it('CREATE CHATBOT creates a running chatbot, visible over REST', async () => {
        const { project, database } = await givenSqlWorld({ withChatbot: false });
        expect(
          (
            await sql(
              `CREATE CHATBOT ${project}.bot USING database = '${database}', agent = 'helper', greeting = 'hi'`,
            )
          ).type,
        ).toBe('ok');
        const bot = (await t.http.get(`/api/projects/${project}/chatbots/bot`).expect(200)).body;
        expect(bot).toMatchObject({
          is_running: true,
          database,
          params: { greeting: 'hi' },
          agent: expect.objectContaining({ name: 'helper' }),
        });
      });
    });

    describe('REST-made resources in SQL', () => {
      it('shows a REST-made skill in its project’s skills table, secrets masked', async () => {
        const { project } = await givenSqlWorldWithRestSkill();
        const a = await table(`SELECT NAME, TYPE, PARAMS FROM ${project}.skills WHERE NAME = 'rest_s'`);
        expect(a.data).toEqual([['rest_s', 'custom', '{"token":"******"}']]);
      });

      it('keeps every secret out of information_schema.skills and information_schema.events', async () => {
        const { project } = await givenSqlWorldWithRestSkill();
        const all = await table(`SELECT * FROM information_schema.skills WHERE PROJECT = '${project}'`);
        expect(JSON.stringify(all)).toContain('rest_s');
        expect(JSON.stringify(all)).not.toMatch(/tok-123|sql-secret-1|sk-sql/);
        const events = await table(
          `SELECT TYPE, DATA FROM information_schema.events WHERE STREAM = 'project-${project}'`,
        );
        expect(events.data!.map((r) => r[0])).toContain('SkillCreated');
        expect(JSON.stringify(events)).not.toMatch(/tok-123|sk-sql/);
      });
    });

    describe('updating', () => {
      it('UPDATE SKILL … SET changes its params', async () => {
        const { project } = await givenSqlWorld();
        expect(
          (await sql(`UPDATE SKILL ${project}.sql_s SET description = 'All orders', tables = ['orders']`))
            .type,
        ).toBe('ok');
        expect(
          (await t.http.get(`/api/projects/${project}/skills/sql_s`).expect(200)).body.params,
        ).toMatchObject({
          description: 'All orders',
          tables: ['orders'],
        });
      });

      it('ALTER AGENT … USING changes its params and adds skills', async () => {
        const { project } = await givenSqlWorldWithRestSkill();
        expect(
          (
            await sql(
              `ALTER AGENT ${project}.helper USING prompt_template = 'Be brief', skills_to_add = ['rest_s']`,
            )
          ).type,
        ).toBe('ok');
        const agent = (await t.http.get(`/api/projects/${project}/agents/helper`).expect(200)).body;
        expect(agent.params.prompt_template).toBe('Be brief');
        expect(agent.skills.map((s: { name: string }) => s.name)).toEqual(['sql_s', 'rest_s']);
      });

      it('UPDATE CHATBOT … SET changes its state and params, null removing one', async () => {
        const { project } = await givenSqlWorld();
        expect(
          (await sql(`UPDATE CHATBOT ${project}.bot SET is_running = false, greeting = null, color = 'red'`))
            .type,
        ).toBe('ok');
        const bot = (await t.http.get(`/api/projects/${project}/chatbots/bot`).expect(200)).body;
        expect(bot).toMatchObject({ is_running: false, params: { color: 'red' } });
        expect(bot.params).not.toHaveProperty('greeting');
      });

      it('refuses UPDATE of an unknown skill (1032)', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        expect(await error(`UPDATE SKILL ${project}.ghost SET a = 1`)).toMatchObject({ error_code: 1032 });
      });

      it('refuses a statement on a project that does not exist as an unknown database (1049), as a SELECT from it is', async () => {
        const project = uniqueName('nowhere');
        const select = await error(`SELECT * FROM ${project}.skills`);
        expect(select).toMatchObject({ error_code: 1049 });
        for (const statement of [
          `CREATE SKILL ${project}.s USING type = 'text2sql', database = 'x', tables = ['t']`,
          `UPDATE SKILL ${project}.s SET a = 1`,
          `DROP AGENT ${project}.a`,
          `CREATE VIEW ${project}.v AS (SELECT 1)`,
        ])
          expect({ statement, answer: await error(statement) }).toEqual({
            statement,
            answer: expect.objectContaining({
              error_code: 1049,
              error_message: expect.stringContaining(project),
            }),
          });
        // Nothing was created meanwhile.
        expect((await t.http.get(`/api/projects/${project}`)).status).toBe(404);
      });
    });

    describe('SHOW and DESCRIBE', () => {
      it('answers SHOW DATABASES and SHOW FULL DATABASES', async () => {
        const { project, database } = await givenSqlWorld();
        expect((await table('SHOW DATABASES')).column_names).toEqual(['Database']);
        const dbs = await table('SHOW FULL DATABASES');
        expect(dbs.column_names).toEqual(['Database', 'TYPE', 'ENGINE']);
        expect(dbs.data).toEqual(
          expect.arrayContaining([
            ['information_schema', 'system', null],
            ['files', 'data', 'files'],
            [project, 'project', null],
            [database, 'data', 'postgres'],
          ]),
        );
      });

      it('answers SHOW PROJECTS', async () => {
        const { project } = await givenSqlWorld();
        const byDb = uniqueName('proj_by_db');
        await ok(`CREATE DATABASE ${byDb}`);
        expect((await table('SHOW PROJECTS')).data).toEqual(
          expect.arrayContaining([['mindsdb'], [project], [byDb]]),
        );
      });

      it('answers SHOW TABLES and SHOW FULL TABLES of a project', async () => {
        const { project } = await givenSqlWorld();
        const tables = await table(`SHOW TABLES FROM ${project}`);
        expect(tables.column_names).toEqual([`Tables_in_${project}`]);
        expect(tables.data!.map((r) => r[0])).toEqual(
          expect.arrayContaining(['models', 'agents', 'skills', 'chatbots']),
        );
        expect((await table('SHOW FULL TABLES', { context: { db: project } })).column_names).toEqual([
          `Tables_in_${project}`,
          'Table_type',
        ]);
      });

      it('answers SHOW SKILLS with LIKE and WHERE', async () => {
        const { project } = await givenSqlWorldWithRestSkill();
        expect((await table(`SHOW SKILLS FROM ${project}`)).data!.map((r) => r[0])).toEqual([
          'sql_s',
          'rest_s',
        ]);
        expect((await table(`SHOW SKILLS FROM ${project} LIKE 'rest%'`)).data!.map((r) => r[0])).toEqual([
          'rest_s',
        ]);
        expect(
          (await table(`SHOW SKILLS FROM ${project} WHERE TYPE = 'sql'`)).data!.map((r) => r[0]),
        ).toEqual(['sql_s']);
      });

      it('answers SHOW AGENTS, SHOW CHATBOTS and SHOW MODELS with MindsDB columns', async () => {
        const { project } = await givenSqlWorld();
        expect((await table('SHOW AGENTS', { context: { db: project } })).column_names).toEqual([
          'NAME',
          'PROJECT',
          'MODEL_NAME',
          'SKILLS',
          'PARAMS',
        ]);
        expect((await table(`SHOW CHATBOTS FROM ${project}`)).column_names).toEqual([
          'NAME',
          'PROJECT',
          'DATABASE',
          'AGENT',
          'MODEL_NAME',
          'PARAMS',
          'IS_RUNNING',
          'LAST_ERROR',
          'WEBHOOK_TOKEN',
        ]);
        expect((await table(`SHOW MODELS FROM ${project}`)).column_names).toContain('STATUS');
      });

      it('answers DESCRIBE of an agent, a skill and a database, secrets masked', async () => {
        const { project, database } = await givenSqlWorld();
        expect((await table(`DESCRIBE AGENT ${project}.helper`)).data![0]![0]).toBe('helper');
        expect((await table('DESCRIBE SKILL sql_s', { context: { db: project } })).data![0]![0]).toBe(
          'sql_s',
        );
        expect((await table(`DESCRIBE DATABASE ${database}`)).data![0]).toEqual([
          database,
          'data',
          'postgres',
          expect.stringContaining('******'),
        ]);
      });

      it('refuses DESCRIBE of an unknown agent (1032)', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        expect(await error(`DESCRIBE AGENT ${project}.nobody`)).toMatchObject({ error_code: 1032 });
      });

      it('refuses SHOW SKILLS of an unknown database (1049)', async () => {
        expect(await error('SHOW SKILLS FROM nowhere')).toMatchObject({ error_code: 1049 });
      });
    });

    describe('MySQL compatibility statements', () => {
      it('answers SHOW VARIABLES, ENGINES, CHARSET and COLLATION with rows', async () => {
        for (const q of ['SHOW VARIABLES', 'SHOW ENGINES', 'SHOW CHARSET', 'SHOW COLLATION'])
          expect((await table(q)).data!.length).toBeGreaterThan(0);
      });

      it('answers SHOW WARNINGS, FUNCTION STATUS and PROCEDURE STATUS empty, with their columns', async () => {
        for (const q of ['SHOW WARNINGS', 'SHOW FUNCTION STATUS', 'SHOW PROCEDURE STATUS'])
          expect((await table(q)).data).toEqual([]);
        expect((await table('SHOW FUNCTION STATUS')).column_names).toContain('Db');
      });
    });

    describe('information_schema', () => {
      it('has the MindsDB tables', async () => {
        for (const name of [
          'DATABASES',
          'MODELS',
          'SKILLS',
          'AGENTS',
          'CHATBOTS',
          'KNOWLEDGE_BASES',
          'JOBS',
          'VIEWS',
          'ML_ENGINES',
          'HANDLERS',
          'EVENTS',
        ])
          expect((await sql(`SELECT * FROM information_schema.${name.toLowerCase()} LIMIT 1`)).type).toBe(
            'table',
          );
      });

      it('lists a project in schemata', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        const schemata = await table(
          `SELECT SCHEMA_NAME FROM information_schema.schemata WHERE SCHEMA_NAME = '${project}'`,
        );
        expect(schemata.data).toEqual([[project]]);
      });

      it('lists the columns of a project’s table in columns', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        const cols = await table(
          `SELECT COLUMN_NAME FROM information_schema.columns WHERE TABLE_SCHEMA = '${project}' AND TABLE_NAME = 'skills' ORDER BY ORDINAL_POSITION`,
        );
        expect(cols.data!.map((r) => r[0])).toEqual(['NAME', 'PROJECT', 'TYPE', 'PARAMS']);
      });

      it('lists the database handlers', async () => {
        const handlers = await table('SELECT NAME FROM information_schema.handlers');
        expect(handlers.data!.map((r) => r[0])).toEqual(
          expect.arrayContaining(['postgres', 'mysql', 'mariadb']),
        );
      });
    });

    describe('dropping', () => {
      it('DROP CHATBOT drops a chatbot', async () => {
        const { project } = await givenSqlWorld();
        expect((await sql(`DROP CHATBOT ${project}.bot`)).type).toBe('ok');
        await t.http.get(`/api/projects/${project}/chatbots/bot`).expect(404);
      });

      it('DROP AGENT IF EXISTS of an unknown agent is ok', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        expect((await sql(`DROP AGENT IF EXISTS ${project}.nobody`)).type).toBe('ok');
      });

      it('refuses DROP AGENT of an unknown agent (1032)', async () => {
        const { name: project } = await givenProject(t, uniqueName('sales'));
        expect(await error(`DROP AGENT ${project}.nobody`)).toMatchObject({ error_code: 1032 });
      });

      it('DROP SKILL drops a skill: it is 404 over REST', async () => {
        const { project } = await givenSqlWorldWithRestSkill();
        expect((await sql(`DROP SKILL ${project}.rest_s`)).type).toBe('ok');
        await t.http.get(`/api/projects/${project}/skills/rest_s`).expect(404);
      });

      it('DROP DATABASE drops an integration', async () => {
        const { project, database } = await givenSqlWorld();
        await ok(`DROP CHATBOT ${project}.bot`);
        expect((await sql(`DROP DATABASE ${database}`)).type).toBe('ok');
        await t.http.get(`/api/databases/${database}`).expect(404);
      });

      it('DROP PROJECT drops a project with what it holds; IF EXISTS tolerates it gone', async () => {
        const { project } = await givenSqlWorld();
        expect((await sql(`DROP PROJECT ${project}`)).type).toBe('ok');
        expect((await sql(`DROP PROJECT IF EXISTS ${project}`)).type).toBe('ok');
        await t.http.get(`/api/projects/${project}`).expect(404);
        expect(await error(`SELECT * FROM ${project}.skills`)).toMatchObject({ error_code: 1049 });
      });

      it('refuses DROP PROJECT mindsdb (1210)', async () => {
        expect(await error('DROP PROJECT mindsdb')).toMatchObject({ error_code: 1210 });
      });
    });
  });
});

describe.each(storeKinds)('SQL statements on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  it('produces the same events as REST', async () => {
    const { name: project } = await givenProject(t);
    await t.http
      .post('/api/sql/query')
      .send({ query: `CREATE SKILL ${project}.s USING type = 'x', k = 1` })
      .expect(200);
    await t.http
      .post(`/api/projects/${project}/skills`)
      .send({ skill: { name: 'r', type: 'x', params: { k: 1 } } })
      .expect(201);
    const events = await eventsOf(t, `project-${project}`);
    const [viaSql, viaRest] = events.slice(-2);
    expect(viaSql!.type).toBe('SkillCreated');
    expect(viaRest!.type).toBe('SkillCreated');
    expect({ ...viaSql!.data, name: 'r', createdAt: 0 }).toEqual({ ...viaRest!.data, createdAt: 0 });
    const answer = (
      await t.http
        .post('/api/sql/query')
        .send({ query: 'SELECT NAME FROM skills ORDER BY NAME', context: { db: project } })
        .expect(200)
    ).body;
    expect(answer.data).toEqual([['r'], ['s']]);
  });
});

describe('the SQL time limit', () => {
  /**
   * Only the query that never ends meets this app's 2 s limit: what follows it reads through the
   * service with a limit ten times longer (a model's training rows), so no outcome here depends on
   * how fast the machine answers a simple statement.
   */
  it('interrupts a query past the time limit, and the reader it held answers next', async () => {
    // One pooled reader: the next read can only run once the interrupted query let it go.
    const t = await startTestApp('sqlite', { SQL_TIMEOUT_MS: '2000', DUCKDB_READERS: '1' });
    try {
      const a = await querySql(t, 'SELECT count(*) FROM range(100000000000) a');
      expect(a.type).toBe('error');
      expect(a.error_code).toBe(3024);
      // The 2000 ms limit ended it (the count would run for hours): its message says so.
      expect(a.error_message).toMatch(/longer than 2000 ms/);
      expect(await t.running.sql.queryRows('mindsdb', 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await t.dispose();
    }
  });
});

describe('a client that goes away', () => {
  it('interrupts its query and frees the connection', async () => {
    // One pooled reader: the next query can only run once the abandoned one was interrupted (its
    // own limit outlasts the test, so a query left running fails it by jest's timeout).
    const t = await startTestApp('sqlite', { SQL_TIMEOUT_MS: '600000', DUCKDB_READERS: '1' });
    const server = t.running.app.listen(0, '127.0.0.1');
    try {
      await new Promise<void>((r) => server.once('listening', () => r()));
      const port = (server.address() as { port: number }).port;
      const body = JSON.stringify({ query: 'SELECT count(*) FROM range(100000000000) a' });
      const request = http.request({
        host: '127.0.0.1',
        port,
        path: '/api/sql/query',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      request.on('error', () => undefined);
      request.end(body);
      await new Promise((r) => setTimeout(r, 300));
      request.destroy();
      const next = await t.http.post('/api/sql/query').send({ query: 'SELECT 42 AS answer' }).expect(200);
      expect(next.body.data).toEqual([[42]]);
    } finally {
      server.close();
      await t.dispose();
    }
  });
});
