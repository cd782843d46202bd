import mysql from 'mysql2/promise';
import pino from 'pino';
import { startMysqlServer } from '../../src/mysql';
import {
  aborted,
  appEngine,
  endlessQuery,
  eventually,
  startFront,
  type EngineCall,
  type Front,
} from './support';

/** The engine call of the statement tagged `tag` (see endlessQuery), once the server has made it. */
const callOf = async (calls: EngineCall[], tag: string) => {
  await eventually(() => calls.some((c) => c.query.includes(`'${tag}'`)));
  return calls.find((c) => c.query.includes(`'${tag}'`))!;
};

describe('interrupting running statements', () => {
  let front: Front;

  beforeAll(async () => {
    // One SQL query at a time: a query left running would hold the only reader (the next waits
    // DUCKDB_ACQUIRE_TIMEOUT_MS, then answers 1040); the time limit is far away.
    front = await startFront({
      env: {
        DUCKDB_READERS: '2',
        SQL_MAX_CONCURRENT: '1',
        SQL_TIMEOUT_MS: '600000',
        DUCKDB_ACQUIRE_TIMEOUT_MS: '20000',
      },
    });
  });
  afterAll(() => front.dispose());

  it('given a client that disconnects mid-query, when it goes, then its query is interrupted and the reader is free', async () => {
    const leaving = await front.connect();
    void leaving.query(endlessQuery('leaving')).catch(() => undefined);
    const call = await callOf(front.calls, 'leaving');
    leaving.destroy();
    expect(await aborted(call.signal!)).toBe('clientGone');
    const next = await front.connect();
    const [rows] = await next.query<mysql.RowDataPacket[]>("SELECT 'after the disconnect' AS x, 6 * 7 AS n");
    expect(rows).toEqual([{ x: 'after the disconnect', n: 42 }]);
  });

  it('given a running query, when another connection sends KILL QUERY, then it fails with 1317 and its connection stays', async () => {
    const victim = await front.connect();
    const outcome = victim.query(endlessQuery('victim')).then(
      () => 'finished',
      (e: { errno?: number; message?: string }) => ({ errno: e.errno, message: e.message }),
    );
    const call = await callOf(front.calls, 'victim');
    const admin = await front.connect();
    const [processes] = await admin.query<mysql.RowDataPacket[]>('SHOW FULL PROCESSLIST');
    expect(processes).toContainEqual(
      expect.objectContaining({
        Id: victim.threadId,
        Command: 'Query',
        Info: expect.stringContaining("'victim'"),
      }),
    );
    await admin.query(`KILL QUERY ${victim.threadId}`);
    expect(await outcome).toEqual({ errno: 1317, message: 'Query execution was interrupted' });
    expect(call.signal!.reason).toBe('killed');
    expect((await victim.query<mysql.RowDataPacket[]>('SELECT 1 AS still_here'))[0]).toEqual([
      { still_here: 1 },
    ]);
  });

  it('given a running query, when another connection sends KILL (CONNECTION), then the query stops and the connection ends', async () => {
    const victim = await front.connect();
    const outcome = victim.query(endlessQuery('connection')).then(
      () => 'finished',
      (e: { code?: string }) => e.code,
    );
    const call = await callOf(front.calls, 'connection');
    const admin = await front.connect();
    await admin.query(`KILL ${victim.threadId}`);
    expect(await outcome).toBe('PROTOCOL_CONNECTION_LOST');
    expect(await aborted(call.signal!)).toBe('killed');
    await expect(admin.query('KILL QUERY 999999')).rejects.toMatchObject({
      errno: 1094,
      message: 'Unknown thread id: 999999',
    });
    expect((await admin.query<mysql.RowDataPacket[]>('SELECT 2 AS reader_free'))[0]).toEqual([
      { reader_free: 2 },
    ]);
  });

  describe('given the server closing', () => {
    const serve = () =>
      startMysqlServer({
        engine: appEngine(front.app, front.calls),
        host: '127.0.0.1',
        port: 0,
        logger: pino({ level: 'silent' }),
      });

    it('when a query outlives the grace period, then it is interrupted with 1317 and every connection ends', async () => {
      const server = await serve();
      const idle = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'a' });
      const idleClosed = new Promise((resolve) => idle.once('end', resolve));
      const busy = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'b' });
      const outcome = busy.query(endlessQuery('shutdown')).then(
        () => 'finished',
        (e: { errno?: number; message?: string }) => ({ errno: e.errno, message: e.message }),
      );
      const call = await callOf(front.calls, 'shutdown');
      await server.close(100);
      expect(await outcome).toEqual({
        errno: 1317,
        message: 'The server is shutting down; the query was interrupted',
      });
      expect(call.signal!.reason).toBe('shutdown');
      await idleClosed;
      expect(server.connections()).toBe(0);
      await expect(
        mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'late' }),
      ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      busy.destroy();
      idle.destroy();
    });

    it('when a query ends within the grace period, then its client gets the whole answer before the connection ends', async () => {
      const server = await serve();
      const c = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'a' });
      const answer = c.query<mysql.RowDataPacket[]>(
        "SELECT sum(i) AS total, 'graceful' AS tag FROM range(100000000) t(i)",
      );
      await callOf(front.calls, 'graceful');
      await server.close(60_000);
      expect((await answer)[0]).toEqual([{ total: '4999999950000000', tag: 'graceful' }]);
      c.destroy();
    });
  });
});
