/**
 * Issue 35: 24,000 named parameters held the event loop for 25.8 s. DuckDB's `bind(record)` looked
 * every name up with a scan of all the statement's parameters (quadratic); the names are now read once
 * by index, and SQL_MAX_PARAMS bounds how many distinct parameters a statement may bind, on every
 * door, before anything is bound. A number no SQL type holds (1e308) is the client's error (1210).
 */
import type mysql from 'mysql2/promise';
import { serialize } from 'pg-protocol';
import type pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { startMysqlServer, type MysqlServer } from '../../src/mysql';
import type { PgServer } from '../../src/pgwire';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { appEngine } from '../mysql/support';
import { failureOf, pgClient, RawPg, rowsOf, startPgDoor } from '../pgwire/support';

const LIMIT = 300;

/** `count` distinct values 0, 3, 6, … and what `sum(x)` over the ones below 1000 in range(1000) gives. */
const multiplesOfThree = (count: number) => {
  const values = Array.from({ length: count }, (_, i) => i * 3);
  return { values, sum: values.filter((v) => v < 1000).reduce((a, b) => a + b, 0) };
};
const inList = (count: number, placeholder: (i: number) => string) =>
  `SELECT sum(x) AS s FROM range(1000) r(x) WHERE x IN (${Array.from({ length: count }, (_, i) => placeholder(i)).join(', ')})`;

describe.each<{ limit: number; env: Record<string, string> }>([
  { limit: LIMIT, env: { SQL_MAX_PARAMS: String(LIMIT) } },
  { limit: 10_000, env: {} },
])('SQL_MAX_PARAMS = $limit', ({ limit, env }) => {
  let t: TestApp;
  let mysqlServer: MysqlServer;
  let pgServer: PgServer;
  const opened: { end(): Promise<void> }[] = [];
  const pgOpened: pg.Client[] = [];
  /** At the default limit, a bind of 5,000 (well under it) is asserted; at 300, exactly the limit. */
  const allowed = limit === LIMIT ? LIMIT : 5_000;

  beforeAll(async () => {
    t = await startTestApp('sqlite', env);
    expect(t.config.sqlMaxParams).toBe(limit);
    // The doors as src/main.ts builds them: told the same limit.
    mysqlServer = await startMysqlServer({
      engine: appEngine(t),
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      maxParams: t.config.sqlMaxParams,
    });
    pgServer = await startPgDoor(t, { server: { maxParams: t.config.sqlMaxParams } });
  });
  afterAll(async () => {
    for (const c of [...opened, ...pgOpened]) await c.end().catch(() => undefined);
    await mysqlServer.close(0);
    await pgServer.close(0);
    await t.dispose();
  });

  const mysqlConnection = async () => {
    const mysql2 = (await import('mysql2/promise')).default;
    const c: mysql.Connection = await mysql2.createConnection({
      host: '127.0.0.1',
      port: mysqlServer.port,
      user: 'analyst',
    });
    opened.push(c);
    return c;
  };
  const pgConnection = async (): Promise<pg.Client> => pgClient(pgServer.port, {}, pgOpened);

  describe('over HTTP (params)', () => {
    const named = (count: number) => {
      const { values, sum } = multiplesOfThree(count);
      return {
        query: inList(count, (i) => `:p${i}`),
        params: Object.fromEntries(values.map((v, i) => [`p${i}`, v])),
        sum,
      };
    };

    it('given as many parameters as allowed, when the query runs, then it answers its rows', async () => {
      const { query, params, sum } = named(allowed);
      const answer = await querySql(t, query, { params });
      expect(answer).toMatchObject({ type: 'table', column_names: ['s'] });
      expect(answer.data!.map((row) => Number(row[0]))).toEqual([sum]);
    }, 60_000);

    it('given one parameter more than SQL_MAX_PARAMS, when the query runs, then it is refused naming the limit', async () => {
      const { query, params } = named(limit + 1);
      const answer = await querySql(t, query, { params });
      expect(answer).toMatchObject({ type: 'error', error_code: 1153 });
      expect(answer.error_message).toBe(
        `The statement is sent ${limit + 1} parameters; SQL_MAX_PARAMS allows ${limit} parameters per statement`,
      );
    }, 60_000);

    it('given more placeholders than SQL_MAX_PARAMS and no values, then it is refused naming the limit, not each missing value', async () => {
      const distinct = await querySql(
        t,
        inList(limit + 1, (i) => `:p${i}`),
      );
      expect(distinct).toMatchObject({ type: 'error', error_code: 1153 });
      expect(distinct.error_message).toBe(
        `The statement uses ${limit + 1} parameters; SQL_MAX_PARAMS allows ${limit} parameters per statement`,
      );
      // `?` (and `$1`) are DuckDB's own placeholders, which nothing binds: counted alike.
      const questionMarks = await querySql(
        t,
        inList(50_000, () => '?'),
      );
      expect(questionMarks).toMatchObject({ type: 'error', error_code: 1153 });
      expect(questionMarks.error_message).toMatch(/uses 50000 parameters; SQL_MAX_PARAMS allows/);
      const few = await querySql(t, 'SELECT ? AS a, $1 AS b, price$1 FROM (SELECT 1 AS price$1)');
      expect(few).toMatchObject({ type: 'error', error_code: 1318 });
      expect(few.error_message).toMatch(/2 positional placeholders/);
      // One placeholder written many times is one parameter.
      const repeated = await querySql(
        t,
        inList(limit + 1, () => ':a'),
        { params: { a: 3 } },
      );
      expect(repeated.data).toEqual([[3]]);
    }, 60_000);

    it('given numbers no SQL integer holds, then the answer is error 1210 naming the parameter (NaN-ish doubles stay doubles)', async () => {
      const huge = await querySql(t, 'SELECT :a + 1 AS x', { params: { a: 1e308 } });
      expect(huge).toMatchObject({ type: 'error', error_code: 1210 });
      expect(huge.error_message).toMatch(/^Parameter a is 1e\+308, an integer past HUGEINT's range/);
      const negative = await querySql(t, 'SELECT :b AS x', { params: { b: -1e300 } });
      expect(negative).toMatchObject({ type: 'error', error_code: 1210 });
      expect(negative.error_message).toMatch(/^Parameter b is -1e\+300/);
      // An overflow in the query's arithmetic is the client's input too.
      const overflow = await querySql(t, 'SELECT :c::BIGINT + 1 AS x', {
        params: { c: 9_223_372_036_854_775_807n.toString() },
      });
      expect(overflow).toMatchObject({ type: 'error', error_code: 1210 });
      expect(overflow.error_message).toMatch(/^Out of Range Error/);
      // Past BIGINT but within HUGEINT, an integer stays exact; a fraction is a DOUBLE.
      expect(
        await querySql(t, 'SELECT :d AS x, :e * 2 AS y', { params: { d: 1e20, e: 1.25 } }),
      ).toMatchObject({
        column_types: ['HUGEINT', 'DOUBLE'],
        data: [['100000000000000000000', 2.5]],
      });
    });
  });

  describe('over the MySQL door (COM_STMT_PREPARE / EXECUTE with ?)', () => {
    it('given as many ? as allowed, when executed, then it answers its rows', async () => {
      const c = await mysqlConnection();
      const { values, sum } = multiplesOfThree(allowed);
      const [rows] = await c.execute(
        inList(allowed, () => '?'),
        values,
      );
      expect((rows as { s: unknown }[]).map((r) => Number(r.s))).toEqual([sum]);
    }, 60_000);

    it('given one ? more than SQL_MAX_PARAMS, when prepared, then the door refuses it (1390) naming the limit, and the connection goes on', async () => {
      const c = await mysqlConnection();
      const { values } = multiplesOfThree(limit + 1);
      await expect(
        c.execute(
          inList(limit + 1, () => '?'),
          values,
        ),
      ).rejects.toMatchObject({
        errno: 1390,
        sqlState: 'HY000',
        message: `Prepared statement contains too many placeholders: ${limit + 1}; SQL_MAX_PARAMS allows ${limit}`,
      });
      // 50,000 `?` and no values are refused alike at PREPARE.
      await expect(c.prepare(inList(50_000, () => '?'))).rejects.toMatchObject({
        errno: 1390,
        message: expect.stringContaining('too many placeholders: 50000; SQL_MAX_PARAMS allows'),
      });
      const [rows] = await c.query('SELECT 1 AS one');
      expect(rows).toEqual([{ one: 1 }]);
    }, 60_000);

    it('given 1e308 bound to a ?, then the error is 1210', async () => {
      const c = await mysqlConnection();
      await expect(c.execute('SELECT ? + 1 AS x', [1e308])).rejects.toMatchObject({
        errno: 1210,
        message: expect.stringMatching(
          /^Parameter __mysql_param_1 is 1e\+308, an integer past HUGEINT's range/,
        ),
      });
    });
  });

  describe('over the PostgreSQL door (extended protocol with $n)', () => {
    it('given as many $n as allowed, when executed, then it answers its rows', async () => {
      const c = await pgConnection();
      const { values, sum } = multiplesOfThree(allowed);
      const result = await c.query(
        inList(allowed, (i) => `$${i + 1}`),
        values,
      );
      expect(result.rows.map((r: { s: unknown }) => Number(r.s))).toEqual([sum]);
    }, 60_000);

    it('given one $n more than SQL_MAX_PARAMS, when parsed, then the door refuses it (54023) naming the limit, and the connection goes on', async () => {
      const c = await pgConnection();
      const { values } = multiplesOfThree(limit + 1);
      expect(
        await failureOf(
          c.query(
            inList(limit + 1, (i) => `$${i + 1}`),
            values,
          ),
        ),
      ).toMatchObject({
        code: '54023',
        message: `prepared statement takes ${limit + 1} parameters; SQL_MAX_PARAMS allows ${limit}`,
      });
      // A single `$n` past the limit names as many parameters.
      expect(await failureOf(c.query(`SELECT $${limit + 1} AS x`, [1]))).toMatchObject({ code: '54023' });
      expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    }, 60_000);

    it('given 1e308 bound as a float8, then the error is 22023 (engine error 1210)', async () => {
      const raw = await RawPg.connect(pgServer.port);
      try {
        raw.send(
          serialize.parse({ text: 'SELECT $1 + 1 AS x', types: [701] }),
          serialize.bind({ values: ['1e308'] }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        );
        const messages = await raw.until('readyForQuery');
        expect(messages.find((m) => m.name === 'error')).toMatchObject({
          code: '22023',
          message: expect.stringMatching(
            /^Parameter __pg_param_1 is 1e\+308, an integer past HUGEINT's range/,
          ),
        });
        // A double that is one stays one.
        raw.send(
          serialize.parse({ text: 'SELECT $1 * 2 AS x', types: [701] }),
          serialize.bind({ values: ['1.25'] }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        );
        expect(rowsOf(await raw.until('readyForQuery'))).toEqual([['2.5']]);
      } finally {
        raw.destroy();
      }
    });
  });
});

describe('SQL_MAX_PARAMS setting', () => {
  it('defaults to 10,000 and stays within what both wire protocols can count (65,535)', () => {
    expect(loadConfig({}).sqlMaxParams).toBe(10_000);
    expect(loadConfig({ SQL_MAX_PARAMS: '65535' }).sqlMaxParams).toBe(65_535);
    expect(() => loadConfig({ SQL_MAX_PARAMS: '65536' })).toThrow(/SQL_MAX_PARAMS/);
  });
});
