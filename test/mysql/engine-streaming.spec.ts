import mysqlCallbacks from 'mysql2';
import mysql from 'mysql2/promise';
import pino from 'pino';
import { startMysqlServer, type MysqlServer, type StreamAnswer } from '../../src/mysql';
import { sqlDoor } from '../../src/users/sqlDoors';
import { type TestApp } from '../support/app';
import { ADMIN, login, startAuthApp, userWithRole } from '../auth/support';
import { appEngine, eventually, startFront, type Front } from './support';

/** Several column types over more rows than one DuckDB chunk (2,048), NULLs in every other column. */
const MIXED = `
  SELECT i AS n, (i % 100)::TINYINT AS tiny, 9007199254740993::BIGINT + i AS big,
         CASE WHEN i % 3 = 0 THEN NULL ELSE (i * 1.25)::DECIMAL(10,2) END AS dec,
         i / 7 AS d, i % 2 = 0 AS even, CASE WHEN i % 4 = 0 THEN NULL ELSE 'row ' || i END AS s,
         DATE '2024-01-01' + i::INTEGER AS day, TIMESTAMP '2024-01-01 00:00:00' + i * INTERVAL 1 SECOND AS ts,
         CASE WHEN i % 5 = 0 THEN NULL ELSE TIMESTAMPTZ '2024-01-01 00:00:00+00' + i * INTERVAL 1 MINUTE END AS tz,
         [i, NULL] AS list, {'k': i} AS struct, ('b' || i)::BLOB AS bytes
  FROM range(2400) t(i)`;

/** Every chunk of a streamed answer; the answer itself beside them. */
const drain = async (answer: StreamAnswer) => {
  if (answer.type !== 'table' || !('rows' in answer))
    throw new Error(`not a stream: ${JSON.stringify(answer)}`);
  const chunks: unknown[][][] = [];
  for await (const chunk of answer.rows) chunks.push(chunk);
  return { answer, chunks, data: chunks.flat() };
};

const callbackConnection = (port: number, opened: mysqlCallbacks.Connection[]) => {
  const conn = mysqlCallbacks.createConnection({ host: '127.0.0.1', port, user: 'reader' });
  conn.on('error', () => undefined);
  opened.push(conn);
  return conn;
};

describe('the SQL engine streams SELECTs over the MySQL protocol', () => {
  describe('given the row limit at 2,500 and answers of at most 1 MB', () => {
    let front: Front;
    /** The same app behind a server that only has `execute` (whole answers), for comparison. */
    let whole: MysqlServer;
    const options = { supportBigNumbers: true, bigNumberStrings: true, dateStrings: true } as const;

    beforeAll(async () => {
      front = await startFront({ env: { SQL_ROW_LIMIT: '2500', SQL_MAX_ANSWER_BYTES: '1000000' } });
      whole = await startMysqlServer({
        engine: { execute: appEngine(front.app).execute },
        host: '127.0.0.1',
        port: 0,
        logger: pino({ level: 'silent' }),
      });
    });
    afterAll(async () => {
      await whole.close(0);
      await front.dispose();
    });

    it('answers a streamed SELECT with the same columns, types and values as execute, in several chunks', async () => {
      const sql = front.app.running.sql;
      const before = sql.streams.chunks;
      const streamed = await drain(await sql.stream(MIXED, {}, {}));
      expect(streamed.chunks.length).toBeGreaterThan(1);
      expect(sql.streams.chunks - before).toBe(streamed.chunks.length);
      const executed = await sql.execute(MIXED, {}, {});
      expect(executed.type).toBe('table');
      if (executed.type !== 'table') return;
      expect(streamed.answer.column_names).toEqual(executed.column_names);
      expect(streamed.answer.column_types).toEqual(executed.column_types);
      expect(streamed.data).toEqual(executed.data);
      expect(streamed.data).toHaveLength(2400);
      expect(streamed.answer.truncated()).toBe(false);
      expect(executed.truncated).toBeUndefined();
      // NULLs, TIMESTAMP WITH TIME ZONE (converted through JS values) and blobs among them.
      expect(streamed.data[0]).toEqual(
        expect.arrayContaining([null, '2024-01-01 00:00:00.000000', Buffer.from('b0').toString('base64')]),
      );
      expect(sql.streams.open).toBe(0);
    });

    it('caches a small deterministic answer read to its end, as execute does: the same text again reads no chunk from DuckDB', async () => {
      const sql = front.app.running.sql;
      const query = 'SELECT i, i * i AS square FROM range(40) t(i) WHERE i % 3 = 0';
      const first = await drain(await sql.stream(query, {}, {}));
      const afterFirst = sql.streams.chunks;
      const again = await drain(await sql.stream(query, {}, {}));
      expect(sql.streams.chunks).toBe(afterFirst);
      expect(again.data).toEqual(first.data);
      expect(again.data).toHaveLength(14);
      // And execute answers it from the same cache, identically.
      const whole = await sql.execute(query, {}, {});
      expect(whole).toMatchObject({ type: 'table', data: first.data });
      expect(sql.streams.chunks).toBe(afterFirst);
      // A volatile query is never cached: each read goes to DuckDB.
      await drain(await sql.stream('SELECT random() AS r FROM range(3)', {}, {}));
      const afterVolatile = sql.streams.chunks;
      await drain(await sql.stream('SELECT random() AS r FROM range(3)', {}, {}));
      expect(sql.streams.chunks).toBeGreaterThan(afterVolatile);
    });

    it('gives a mysql2 client the same rows and field types streamed as whole', async () => {
      const streaming = await front.connect(options);
      const [streamedRows, streamedFields] = await streaming.query<mysql.RowDataPacket[]>(MIXED);
      const c = await mysql.createConnection({ host: '127.0.0.1', port: whole.port, user: 'a', ...options });
      try {
        const [rows, fields] = await c.query<mysql.RowDataPacket[]>(MIXED);
        expect(streamedRows).toHaveLength(2400);
        expect(streamedRows).toEqual(rows);
        const shape = (f: mysql.FieldPacket) => [f.name, f.columnType, f.characterSet, f.flags, f.decimals];
        expect(streamedFields.map(shape)).toEqual(fields.map(shape));
        expect(streamedRows[3]).toMatchObject({
          n: '3',
          dec: null,
          s: 'row 3',
          tz: '2024-01-01 00:03:00.000000',
        });
      } finally {
        c.destroy();
      }
    });

    it('given more rows than SQL_ROW_LIMIT, then the stream stops at the limit and the client is warned', async () => {
      const c = await front.connect();
      const [rows] = await c.query<mysql.RowDataPacket[]>('SELECT range AS n FROM range(100000)');
      expect(rows).toHaveLength(2500);
      expect(rows[2499]).toEqual({ n: 2499 });
      const [warnings] = await c.query<mysql.RowDataPacket[]>('SHOW WARNINGS');
      expect(warnings).toEqual([
        {
          Level: 'Warning',
          Code: 1105,
          Message:
            "The result was cut after 2500 rows: it reached the server's row or size limit (SQL_ROW_LIMIT, SQL_MAX_ANSWER_BYTES)",
        },
      ]);
      const answer = await drain(
        await front.app.running.sql.stream('SELECT range FROM range(100000)', {}, {}),
      );
      expect(answer.data).toHaveLength(2500);
      expect(answer.answer.truncated()).toBe(true);
    });

    it('given rows past SQL_MAX_ANSWER_BYTES, then the stream stops where execute cuts its answer', async () => {
      const query = "SELECT range, repeat('x', 1000) AS pad FROM range(2000)";
      const streamed = await drain(await front.app.running.sql.stream(query, {}, {}));
      const executed = await front.app.running.sql.execute(query, {}, {});
      expect(executed).toMatchObject({ type: 'table', truncated: true });
      expect(streamed.answer.truncated()).toBe(true);
      expect(streamed.data).toEqual(executed.type === 'table' ? executed.data : undefined);
      expect(streamed.data.length).toBeLessThan(1000);
    });

    it('adapts statements that are not SELECTs (SHOW, errors) to the streaming shape', async () => {
      const shown = await drain(await front.app.running.sql.stream('SHOW DATABASES', {}, {}));
      expect(shown.chunks).toHaveLength(1);
      expect(shown.data).toContainEqual(['mindsdb']);
      expect(await front.app.running.sql.stream('SELECT * FROM nowhere.nothing', {}, {})).toMatchObject({
        type: 'error',
      });
      expect(await front.app.running.sql.stream('DROP TABLE mindsdb.models', {}, {})).toMatchObject({
        type: 'error',
        error_code: 1227,
      });
    });
  });

  describe('given one pooled reader and no row limit to speak of', () => {
    let front: Front;
    const opened: mysqlCallbacks.Connection[] = [];

    beforeAll(async () => {
      // A stream that kept the reader would make the next query wait DUCKDB_ACQUIRE_TIMEOUT_MS, then fail (1040).
      front = await startFront({
        env: {
          DUCKDB_READERS: '1',
          SQL_ROW_LIMIT: '10000000',
          SQL_TIMEOUT_MS: '600000',
          DUCKDB_ACQUIRE_TIMEOUT_MS: '5000',
        },
      });
    });
    afterAll(async () => {
      for (const conn of opened) conn.destroy();
      await front.dispose();
    });

    /** A query read through mysql2's row stream, paused at its first row; rows counted as they come. */
    const pausedAtFirstRow = async (sql: string) => {
      const conn = callbackConnection(front.port, opened);
      const rows = conn.query({ sql, rowsAsArray: true }).stream({ highWaterMark: 16 });
      rows.on('error', () => undefined);
      const seen = { count: 0, first: undefined as unknown, last: undefined as unknown };
      rows.on('data', (row: unknown) => {
        if (seen.count++ === 0) {
          seen.first = row;
          rows.pause();
        }
        seen.last = row;
      });
      await eventually(() => seen.count > 0);
      return { conn, rows, seen };
    };

    it('given a client that disconnects mid-stream, then the reader is released and the next query answers', async () => {
      const streams = front.app.running.sql.streams;
      const { conn, seen } = await pausedAtFirstRow('SELECT range FROM range(5000000)');
      expect(seen.first).toEqual([0]);
      expect(streams.open).toBe(1);
      conn.destroy();
      await eventually(() => streams.open === 0);
      const next = await front.connect();
      const [rows] = await next.query<mysql.RowDataPacket[]>(
        "SELECT 'after the disconnect' AS x, 6 * 7 AS n",
      );
      expect(rows).toEqual([{ x: 'after the disconnect', n: 42 }]);
    });

    it('sends the first rows while DuckDB is still reading, and reads no further than the client takes', async () => {
      const streams = front.app.running.sql.streams;
      // About 50 MB on the wire (within SQL_MAX_ANSWER_BYTES); socket buffers hold a few MB.
      const total = 250_000;
      const chunksOfAll = Math.ceil(total / 2048);
      const before = streams.chunks;
      const { rows, seen } = await pausedAtFirstRow(
        `SELECT range, repeat('x', 200) AS pad FROM range(${total})`,
      );
      expect(seen.first).toEqual([0, 'x'.repeat(200)]);
      // The client has its first row; the stream holds the reader and has read part of the result.
      expect(streams.open).toBe(1);
      expect(streams.chunks - before).toBeLessThan(chunksOfAll);
      // Paused, the client takes nothing more: the reading stalls behind it, far from the end.
      await new Promise((r) => setTimeout(r, 300));
      expect(streams.chunks - before).toBeLessThan(chunksOfAll / 2);
      expect(streams.open).toBe(1);
      rows.resume();
      await new Promise((resolve) => rows.once('end', resolve));
      expect(seen.count).toBe(total);
      expect(seen.last).toEqual([total - 1, 'x'.repeat(200)]);
      expect(streams.chunks - before).toBeGreaterThanOrEqual(chunksOfAll);
      expect(streams.open).toBe(0);
    });

    it('given KILL QUERY mid-stream, then the reader is released and the client gets 1317 in place of its next rows', async () => {
      const streams = front.app.running.sql.streams;
      const { conn, rows } = await pausedAtFirstRow('SELECT range FROM range(5000000)');
      const failed = new Promise<{ errno?: number; message?: string }>((resolve) =>
        rows.once('error', resolve),
      );
      const admin = await front.connect();
      await admin.query(`KILL QUERY ${conn.threadId}`);
      await eventually(() => streams.open === 0);
      const [answer] = await admin.query<mysql.RowDataPacket[]>('SELECT 2 AS reader_free');
      expect(answer).toEqual([{ reader_free: 2 }]);
      rows.resume();
      expect(await failed).toMatchObject({ errno: 1317, message: 'Query execution was interrupted' });
    });

    it('given a consumer that stops early (return()), then the reader is back in the pool when return() settles', async () => {
      const sql = front.app.running.sql;
      const answer = await sql.stream('SELECT range FROM range(5000000)', {}, {});
      if (answer.type !== 'table' || !('rows' in answer)) throw new Error('not a stream');
      const rows = answer.rows[Symbol.asyncIterator]();
      expect((await rows.next()).value).toHaveLength(2048);
      expect(sql.streams.open).toBe(1);
      await rows.return!();
      expect(sql.streams.open).toBe(0);
      expect(await sql.execute('SELECT 1 AS n', {}, {})).toMatchObject({ data: [[1]] });
    });

    it('given an abort while a chunk is being read, then the rows fail with 1317 (never a short result that looks whole)', async () => {
      const sql = front.app.running.sql;
      const controller = new AbortController();
      const answer = await sql.stream('SELECT range FROM range(5000000)', {}, {}, controller.signal);
      if (answer.type !== 'table' || !('rows' in answer)) throw new Error('not a stream');
      const rows = answer.rows[Symbol.asyncIterator]();
      await rows.next();
      const reading = rows.next();
      controller.abort();
      // DuckDB ends an interrupted fetch with an empty chunk (or the chunk it had): the next read fails.
      const failure = await (async () => {
        for (let next = await reading; !next.done; next = await rows.next());
        return 'ended as if whole';
      })().catch((error: unknown) => error);
      expect(failure).toMatchObject({
        error_code: 1317,
        message: 'The client went away; the query was interrupted',
      });
      expect(sql.streams.open).toBe(0);
    });
  });

  describe('given authentication on (the MySQL door)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startAuthApp('sqlite');
      const admin = await login(t, ADMIN.name, ADMIN.password);
      await userWithRole(t, admin, 'the_auditor', 'auditor');
      await userWithRole(t, admin, 'the_analyst', 'analyst');
    });
    afterAll(() => t.dispose());

    const client = (user: string) => ({ user, host: '127.0.0.1', connectionId: 1 });

    it('streams through the door with the role checks execute has', async () => {
      const door = sqlDoor(t.running.services.users, t.running.sql, true);
      expect(typeof door.engine.stream).toBe('function');
      const select = 'SELECT * FROM mindsdb.models';
      const refused = await door.engine.stream(select, {}, {}, undefined, client('the_auditor'));
      const executed = await door.engine.execute(select, {}, {}, undefined, client('the_auditor'));
      expect(refused).toMatchObject({ type: 'error', error_code: 1227 });
      expect(refused).toEqual(executed);
      const statement = 'CREATE PROJECT by_an_analyst';
      expect(await door.engine.stream(statement, {}, {}, undefined, client('the_analyst'))).toMatchObject({
        type: 'error',
        error_code: 1227,
      });
      const allowed = await drain(
        await door.engine.stream('SELECT range FROM range(3)', {}, {}, undefined, client('the_analyst')),
      );
      expect(allowed.data).toEqual([[0], [1], [2]]);
      expect(await door.engine.stream(select, {}, {}, undefined, client('nobody'))).toMatchObject({
        type: 'error',
        error_code: 1045,
      });
    });
  });
});
