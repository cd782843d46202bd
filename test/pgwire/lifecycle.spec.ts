/**
 * The PostgreSQL server's life and limits: the startup exchange's refusals, connections and message
 * sizes capped, clients that never log in, a graceful close (statements finishing within the grace,
 * the rest told 57P01), and the real service serving psql on PG_PORT until SIGTERM.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { serialize } from 'pg-protocol';
import pino from 'pino';
import type { SqlAnswer, SqlEngine } from '../../src/doorway/engine';
import { startPgServer, type PgServer } from '../../src/pgwire';
import { querySql } from '../support/app';
import {
  endlessQuery,
  eventually,
  failureOf,
  namesOf,
  pgClient,
  RawPg,
  rowsOf,
  runPsql,
  startPgFront,
  type PgFront,
} from './support';
import { bundled } from '../support/bundled';

const ROOT = path.resolve(__dirname, '../..');

/** An engine whose statements answer when the spec lets them (one gate per statement, in order). */
const gatedEngine = () => {
  const waiting: { query: string; open: () => void }[] = [];
  const engine: SqlEngine = {
    execute: async (query) => {
      await new Promise<void>((resolve) => waiting.push({ query, open: resolve }));
      return {
        type: 'table',
        column_names: ['answer'],
        column_types: ['VARCHAR'],
        data: [[`answered: ${query}`]],
        context: {},
      } satisfies SqlAnswer;
    },
  };
  return { engine, waiting };
};

const serveWith = (engine: SqlEngine, o: Partial<Parameters<typeof startPgServer>[0]> = {}) =>
  startPgServer({ engine, host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }), ...o });

/** Whether a TCP connection to `port` is refused. */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

describe('the startup exchange and the server limits', () => {
  const servers: PgServer[] = [];
  const raws: RawPg[] = [];
  const serve = async (o: Partial<Parameters<typeof startPgServer>[0]> = {}) => {
    const server = await serveWith(gatedEngine().engine, o);
    servers.push(server);
    return server;
  };
  const rawOn = async (server: PgServer, params: Record<string, string> | null = { user: 'raw' }) => {
    const raw = await RawPg.connect(server.port, params);
    raws.push(raw);
    return raw;
  };
  afterAll(async () => {
    for (const raw of raws) raw.destroy();
    // Bounded: a close that never settles is the subject of its own spec below, not a reason to hang here.
    for (const server of servers)
      await Promise.race([server.close(0), sleep(2000, undefined, { ref: false })]);
  });

  it('refuses a startup packet without a user, and protocol 2.0, with FATAL errors', async () => {
    const server = await serve();
    const noUser = await rawOn(server, null);
    noUser.send(serialize.startup({ database: 'mindsdb' }));
    expect(await noUser.rest()).toEqual([
      expect.objectContaining({
        name: 'error',
        severity: 'FATAL',
        code: '28000',
        message: 'no PostgreSQL user name specified in startup packet',
      }),
    ]);
    const oldProtocol = await rawOn(server, null);
    oldProtocol.send(Buffer.from([0, 0, 0, 9, 0, 2, 0, 0, 0]));
    expect(await oldProtocol.rest()).toEqual([
      expect.objectContaining({
        severity: 'FATAL',
        code: '0A000',
        message: expect.stringMatching(/^unsupported frontend protocol 2\.0: server supports 3\.0/),
      }),
    ]);
  });

  it('answers a 3.1 client with NegotiateProtocolVersion (3.0, its unknown options), then logs it in', async () => {
    const server = await serve();
    const raw = await rawOn(server, null);
    const body = Buffer.from('\0\x03\0\x01user\0newer\0_pq_.compression\0on\0\0', 'latin1');
    const length = Buffer.alloc(4);
    length.writeInt32BE(body.length + 4);
    raw.send(length, body);
    const startup = await raw.until('readyForQuery');
    expect(startup[0]).toEqual({
      name: 'negotiateProtocolVersion',
      length: expect.any(Number),
      minor: 0,
      options: ['_pq_.compression'],
    });
    expect(namesOf(startup)).toEqual(expect.arrayContaining(['authenticationOk', 'backendKeyData']));
    expect(startup.at(-1)).toMatchObject({ name: 'readyForQuery', status: 'I' });
  });

  it("refuses a connection past maxConnections with 53300 'sorry, too many clients already'", async () => {
    const server = await serve({ maxConnections: 2 });
    const first = await pgClient(server.port);
    await pgClient(server.port);
    expect(server.connections()).toBe(2);
    expect(await failureOf(pgClient(server.port))).toMatchObject({
      severity: 'FATAL',
      code: '53300',
      message: 'sorry, too many clients already',
    });
    await first.end();
    await eventually(() => server.connections() === 1);
    const again = await pgClient(server.port);
    expect((await again.query('SHOW server_version')).rows).toEqual([{ server_version: '16.0' }]);
  });

  it('ends a connection sending a message over maxMessageBytes with FATAL 08P01', async () => {
    const server = await serve({ maxMessageBytes: 1024 });
    const raw = await rawOn(server);
    raw.send(serialize.query(`SELECT '${'x'.repeat(2000)}'`));
    expect(await raw.rest()).toEqual([
      expect.objectContaining({
        severity: 'FATAL',
        code: '08P01',
        message: 'message of 2010 bytes is over the limit of 1024',
      }),
    ]);
    await eventually(() => server.connections() === 0);
  });

  it('disconnects a client that does not log in within handshakeTimeoutMs', async () => {
    const server = await serve({ handshakeTimeoutMs: 200 });
    const silent = await rawOn(server, null);
    expect(server.connections()).toBe(1);
    // Ended by the server at its 200 ms: the wait's own limit outlasts the test, so a server that
    // kept the client fails it by jest's timeout, not by a measured time.
    expect(await silent.rest(600_000)).toEqual([]);
    await eventually(() => server.connections() === 0);
  });

  it("answers an SSLRequest with 'N' when no TLS is configured, and the client goes on in plain text", async () => {
    const server = await serve();
    const out = await runPsql(server.port, 'SHOW server_version', { env: { PGSSLMODE: 'prefer' } });
    expect(out).toEqual({ code: 0, stdout: '16.0\n', stderr: '' });
  });
});

describe('closing the server', () => {
  it('lets a statement finish within the grace period, then ends its connection (57P01)', async () => {
    const { engine, waiting } = gatedEngine();
    const server = await serveWith(engine);
    const busy = await RawPg.connect(server.port);
    const idle = await RawPg.connect(server.port);
    busy.send(serialize.query('SELECT 1'));
    await eventually(() => waiting.length === 1);

    // A grace longer than the test: close() settling at all says the last connection's end settled it.
    const closed = server.close(600_000);
    // The idle connection is ended at once.
    expect(await idle.rest()).toEqual([
      expect.objectContaining({
        severity: 'FATAL',
        code: '57P01',
        message: 'terminating connection due to administrator command',
      }),
    ]);
    expect(await refused(server.port)).toBe(true);
    waiting[0]!.open();
    const answered = await busy.until('readyForQuery');
    expect(rowsOf(answered)).toEqual([['answered: SELECT 1']]);
    expect(await busy.rest()).toEqual([expect.objectContaining({ severity: 'FATAL', code: '57P01' })]);
    await closed;
    expect(server.connections()).toBe(0);
  });

  it('settles close() after refusing a client past maxConnections (the refused socket does not hold it open)', async () => {
    const server = await serveWith(gatedEngine().engine, { maxConnections: 1 });
    const admitted = await pgClient(server.port);
    expect(await failureOf(pgClient(server.port))).toMatchObject({ code: '53300' });
    await admitted.end();
    await eventually(() => server.connections() === 0);
    // Held open by the refused socket, close() would not settle and the test would time out.
    await server.close(0);
    expect(server.connections()).toBe(0);
  });

  describe('given the real engine', () => {
    let front: PgFront;
    beforeAll(async () => {
      front = await startPgFront({ env: { SQL_TIMEOUT_MS: '600000' } });
    });
    afterAll(() => front.dispose());

    it('interrupts a statement still running when the grace period is over: its client gets 57P01', async () => {
      const raw = await RawPg.connect(front.port);
      raw.send(serialize.query(endlessQuery('at-shutdown')));
      await eventually(() => front.calls.some((c) => c.query.includes("'at-shutdown'")));
      const call = front.calls.find((c) => c.query.includes("'at-shutdown'"))!;
      // The statement would run for its 600 s limit, past the test's: close() settling says it ended
      // it after its 300 ms grace.
      await front.server.close(300);
      expect(call.signal!.aborted).toBe(true);
      const messages = await raw.rest();
      expect(messages).toContainEqual(
        expect.objectContaining({
          name: 'error',
          code: '57P01',
          message: 'terminating statement because the server is shutting down',
        }),
      );
      expect(front.server.connections()).toBe(0);
      // The engine is free again: the statement was stopped, not left running.
      expect(await querySql(front.app, 'SELECT 42 AS n')).toMatchObject({ data: [[42]] });
    });
  });
});

describe('the PostgreSQL door of the real service', () => {
  it('answers psql on PG_PORT with the same engine as HTTP, and exits 0 on SIGTERM', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-pg-door-'));
    const [httpPort, pgPort] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, [await bundled('src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(httpPort),
        MYSQL_PORT: '0',
        PG_PORT: String(pgPort),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        EVENT_STORE_URL: '',
        SHUTDOWN_GRACE_MS: '2000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const until = Date.now() + 60_000;
      while (!/PostgreSQL protocol listening/.test(output) || !/mindledger listening/.test(output)) {
        if (Date.now() > until || child.exitCode !== null)
          throw new Error(`the service did not start:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(output).not.toMatch(/MySQL protocol listening/);
      const created = await fetch(`http://127.0.0.1:${httpPort}/api/projects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'door' }),
      });
      expect(created.status).toBe(201);

      const databases = await runPsql(pgPort, 'SHOW DATABASES');
      expect(databases).toMatchObject({ code: 0, stderr: '' });
      expect(databases.stdout.split('\n')).toEqual(expect.arrayContaining(['door', 'mindsdb', 'files']));
      const version = await runPsql(pgPort, 'SELECT version()');
      expect(version.stdout).toMatch(/^PostgreSQL 16\.0 \(mindledger .*; MindsDB-compatible SQL\)\n$/);
      const skill = await runPsql(pgPort, "CREATE SKILL door.s USING type = 'custom', params = {}");
      expect(skill).toEqual({ code: 0, stdout: 'CREATE SKILL\n', stderr: '' });
      const skills = await (await fetch(`http://127.0.0.1:${httpPort}/api/projects/door/skills`)).json();
      expect(skills).toEqual([expect.objectContaining({ name: 's', type: 'custom' })]);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(await refused(pgPort)).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
