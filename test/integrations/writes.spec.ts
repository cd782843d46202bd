import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { freshMariaData, freshPostgresData, rowsInExternal, type ExternalEngine } from '../support/external';
import { givenProject, givenSkill, uniqueName } from '../support/world';

type Source = { name: string; parameters: Record<string, unknown>; drop: () => Promise<void> };
type Engine = ExternalEngine;

/** The rows of a table, read from the external database itself (not through the service). */
const rowsIn = (engine: Engine, source: Source, sql: string) => rowsInExternal(engine, source.name, sql);

const engines: [Engine, (setup: string[]) => Promise<Source>][] = [
  ['postgres', freshPostgresData],
  ['mysql', freshMariaData],
];

describe.each(storeKinds)('writes into external databases on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t.dispose());

  const writesOf = async (db: string) =>
    (await t.http.get(`/api/events?stream=database-writes-${db}`).expect(200)).body.events as {
      type: string;
      data: { database: string; table: string; statement: string; rowsAffected: number; text: string };
      metadata?: { actor?: string };
    }[];

  describe.each(engines)('on %s', (engine, fresh) => {
    let source: Source;
    let db: string;
    beforeAll(async () => {
      // A table of scores for each test that writes one: none sees another's rows.
      source = await fresh([
        'CREATE TABLE scores (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, score INT)',
        'CREATE TABLE kept_scores (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, score INT)',
      ]);
      db = uniqueName(`w_${engine}`);
      await t.http
        .post('/api/databases')
        .send({ database: { name: db, engine, parameters: source.parameters } })
        .expect(201);
    });
    afterAll(() => source.drop());

    it('CREATE TABLE db.t (SELECT …) copies a query of the read model into a new table, and records it', async () => {
      const { name: project } = await givenProject(t);
      await givenSkill(t, project, { name: 'one' });
      await givenSkill(t, project, { name: 'two' });
      const answer = await querySql(
        t,
        `CREATE TABLE ${db}.skill_copy (SELECT name AS name, type AS type, 3 AS n FROM ${project}.skills ORDER BY name)`,
      );
      expect(answer).toMatchObject({ type: 'ok', affected_rows: 2 });
      expect(await rowsIn(engine, source, 'SELECT name, type, n FROM skill_copy ORDER BY name')).toEqual([
        ['one', 'custom', 3],
        ['two', 'custom', 3],
      ]);
      const [event] = (await writesOf(db)).filter((e) => e.data.table === 'skill_copy');
      expect(event).toMatchObject({
        type: 'IntegrationTableWritten',
        data: {
          database: db,
          statement: 'CREATE TABLE',
          rowsAffected: 2,
          text: expect.stringContaining('skill_copy'),
        },
      });
    });

    it('INSERT (VALUES and SELECT), UPDATE and DELETE reach the table; each answers and records its row count', async () => {
      expect(
        await querySql(t, `INSERT INTO ${db}.scores (id, name, score) VALUES (1, 'ada', 10), (2, 'bob', 20)`),
      ).toMatchObject({
        type: 'ok',
        affected_rows: 2,
      });
      expect(
        await querySql(t, `INSERT INTO ${db}.scores (SELECT 3 AS id, 'cy' AS name, 30 AS score)`),
      ).toMatchObject({ affected_rows: 1 });
      expect(await querySql(t, `UPDATE ${db}.scores SET score = score + 1 WHERE id >= 2`)).toMatchObject({
        affected_rows: 2,
      });
      expect(await querySql(t, `DELETE FROM ${db}.scores WHERE name = 'ada'`)).toMatchObject({
        affected_rows: 1,
      });
      expect(await rowsIn(engine, source, 'SELECT id, name, score FROM scores ORDER BY id')).toEqual([
        [2, 'bob', 21],
        [3, 'cy', 31],
      ]);
      const recorded = (await writesOf(db)).filter((e) => e.data.table === 'scores');
      expect(recorded.map((e) => [e.data.statement, e.data.rowsAffected])).toEqual([
        ['INSERT', 2],
        ['INSERT', 1],
        ['UPDATE', 2],
        ['DELETE', 1],
      ]);
    });

    it('a write that fails part-way changes nothing there and records nothing here', async () => {
      await querySql(t, `INSERT INTO ${db}.kept_scores (id, name, score) VALUES (100, 'keep', 1)`);
      const before = await rowsIn(engine, source, 'SELECT id FROM kept_scores ORDER BY id');
      const recordedBefore = (await writesOf(db)).length;
      // The third row clashes with the primary key: the two before it must not stay.
      const clash = await querySql(
        t,
        `INSERT INTO ${db}.kept_scores (SELECT * FROM (VALUES (101, 'x', 1), (102, 'y', 2), (100, 'dup', 3)) AS v(id, name, score))`,
      );
      expect(clash.type).toBe('error');
      expect(clash.error_message).toMatch(new RegExp(db));
      const nulls = await querySql(t, `CREATE TABLE ${db}.half (SELECT * FROM (VALUES (1), (NULL)) AS v(x))`);
      expect(nulls.type).toBe('ok');
      const bad = await querySql(t, `UPDATE ${db}.kept_scores SET name = NULL WHERE id = 100`);
      expect(bad.type).toBe('error');
      expect(await rowsIn(engine, source, 'SELECT id FROM kept_scores ORDER BY id')).toEqual(before);
      expect((await writesOf(db)).length).toBe(recordedBefore + 1);
    });

    it('a write whose query fails after its first rows were read writes none of them and records nothing', async () => {
      // DuckDB ends such a read as it ends a whole one (src/sql/pipeline/values.ts): the rows read
      // before the failure were inserted into the customer's table as if whole.
      const late =
        "SELECT i AS id, 'late' AS name, 1 AS score FROM range(1000, 201000) t(i) WHERE CASE WHEN i < 101000 THEN true ELSE error('boom') END";
      const before = await rowsIn(engine, source, 'SELECT count(*) FROM kept_scores');
      const recordedBefore = (await writesOf(db)).length;
      const inserted = await querySql(t, `INSERT INTO ${db}.kept_scores (${late})`);
      expect(inserted).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(
          /^INSERT INTO .*kept_scores.*: The query failed while its rows were being read, after \d+ rows/,
        ),
      });
      const created = await querySql(t, `CREATE TABLE ${db}.late_copy (${late})`);
      expect(created).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(/failed while its rows were being read/),
      });
      expect(await rowsIn(engine, source, 'SELECT count(*) FROM kept_scores')).toEqual(before);
      expect(
        await rowsIn(
          engine,
          source,
          "SELECT count(*) FROM information_schema.tables WHERE table_name = 'late_copy'",
        ),
      ).toEqual([[0]]);
      expect((await writesOf(db)).length).toBe(recordedBefore);
    });

    it('CREATE OR REPLACE TABLE replaces it, DROP TABLE drops it', async () => {
      await querySql(t, `CREATE TABLE ${db}.temp (SELECT 1 AS a)`);
      expect(await querySql(t, `CREATE TABLE ${db}.temp (SELECT 2 AS a)`)).toMatchObject({ type: 'error' });
      await querySql(t, `CREATE OR REPLACE TABLE ${db}.temp (SELECT 2 AS b, 'x' AS c)`);
      expect(await rowsIn(engine, source, 'SELECT b, c FROM temp')).toEqual([[2, 'x']]);
      expect(await querySql(t, `DROP TABLE ${db}.temp`)).toMatchObject({ type: 'ok' });
      expect((await querySql(t, `SELECT * FROM ${db}.temp`)).type).toBe('error');
      expect(await querySql(t, `DROP TABLE IF EXISTS ${db}.temp`)).toMatchObject({ type: 'ok' });
      const statements = (await writesOf(db))
        .filter((e) => e.data.table === 'temp')
        .map((e) => e.data.statement);
      expect(statements).toEqual(['CREATE TABLE', 'CREATE OR REPLACE TABLE', 'DROP TABLE', 'DROP TABLE']);
    });

    it('`||` joins strings in a write as in a read: MySQL and MariaDB, which read it as OR, are not sent it', async () => {
      await querySql(
        t,
        `INSERT INTO ${db}.kept_scores (id, name, score) VALUES (200, 'ab', 7), (201, 'a', 8), (202, 'keep||^', 9)`,
      );
      const before = await rowsIn(engine, source, 'SELECT id, name, score FROM kept_scores ORDER BY id');
      const recordedBefore = (await writesOf(db)).length;
      // Sent as written, MariaDB read `name = 'a' || 'b'` as `(name = 'a') OR 'b'` and deleted row
      // 201 where the statement means 200; `score || 0` set 8 to 1; the VALUES row was stored 1.
      const writes = [
        `DELETE FROM ${db}.kept_scores WHERE name = 'a' || 'b'`,
        `UPDATE ${db}.kept_scores SET score = 2 ^ 4 WHERE id = 201`,
        `INSERT INTO ${db}.kept_scores (id, name, score) VALUES (203, 'c' || 'd', 1)`,
        // PostgreSQL has no integer || integer: its own refusal, not ours, would answer there.
        ...(engine === 'postgres' ? [] : [`UPDATE ${db}.kept_scores SET score = score || 0 WHERE id = 201`]),
      ];
      for (const statement of writes) {
        const answer = await querySql(t, statement);
        if (engine === 'postgres') {
          expect(answer).toMatchObject({ type: 'ok' });
          continue;
        }
        expect(answer).toMatchObject({ type: 'error', error_code: 1210 });
        expect(answer.error_message).toMatch(
          new RegExp(
            `^(DELETE FROM|UPDATE|INSERT INTO) ${db}\\.kept_scores is sent to its database \\(mysql\\), which reads \`(\\|\\||\\^)\` `,
          ),
        );
      }
      if (engine === 'postgres') {
        // PostgreSQL reads both as the statement means: 200 deleted, 201's score 2 ^ 4 (16), 203 'cd'.
        expect(
          await rowsIn(engine, source, 'SELECT id, name, score FROM kept_scores WHERE id >= 200 ORDER BY id'),
        ).toEqual([
          [201, 'a', 16],
          [202, 'keep||^', 9],
          [203, 'cd', 1],
        ]);
        return;
      }
      expect(await rowsIn(engine, source, 'SELECT id, name, score FROM kept_scores ORDER BY id')).toEqual(
        before,
      );
      expect((await writesOf(db)).length).toBe(recordedBefore);
      // What the message says to write does what is meant; a string holding the operators is not one.
      expect(
        await querySql(t, `DELETE FROM ${db}.kept_scores WHERE name = concat('a', 'b') OR name = 'keep||^'`),
      ).toMatchObject({ type: 'ok', affected_rows: 2 });
      expect(await rowsIn(engine, source, 'SELECT id FROM kept_scores WHERE id >= 200 ORDER BY id')).toEqual([
        [201],
      ]);
    });
  });

  it('projects and their tables stay read-only, and files take no UPDATE nor DROP TABLE, each refusal naming the statement', async () => {
    for (const [statement, named] of [
      ['CREATE TABLE mindsdb.x (SELECT 1)', /^CREATE TABLE mindsdb\.x is not supported/],
      ["UPDATE files.x SET a = 'x'", /^UPDATE files\.x is not supported/],
      ['DROP TABLE files.x', /^DROP TABLE files\.x is not supported/],
      ["UPDATE mindsdb.skills SET name = 'x'", /^UPDATE mindsdb\.skills is not supported/],
      ['DROP TABLE mindsdb.skills', /^DROP TABLE mindsdb\.skills is not supported/],
      ['INSERT INTO mindsdb.skills (name) VALUES (1)', /^INSERT INTO mindsdb\.skills is not allowed/],
    ] as const) {
      const answer = await querySql(t, statement);
      expect(answer).toMatchObject({ type: 'error', error_code: 1227 });
      expect(answer.error_message).toMatch(named);
    }
  });
});
