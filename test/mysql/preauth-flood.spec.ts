/**
 * Unauthenticated sockets cannot lock the MySQL door (issue 35): connections that have not signed
 * in have a room of their own (bounded in all and per address, the oldest dropped past either),
 * apart from the room of signed-in ones, so a real client signs in during a flood.
 */
import net from 'node:net';
import mysql from 'mysql2/promise';
import pino from 'pino';
import { startMysqlServer, type MysqlServer } from '../../src/mysql';
import { sqlDoor } from '../../src/users/sqlDoors';
import { ADMIN, startAuthApp } from '../auth/support';
import type { TestApp } from '../support/app';
import { idleSockets, openSockets as open } from '../support/sockets';

const FLOOD = 400;
const PER_ADDRESS = 32;
const MAX_PRE_AUTH = 48;
const HELD_ELSEWHERE = 20;

/** Resolves once `predicate` holds; fails after `timeoutMs` saying what was waited for. */
const eventually = async (predicate: () => boolean, what: string, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('the MySQL door under a flood of unauthenticated sockets', () => {
  let t: TestApp;
  let server: MysqlServer;
  const sockets: net.Socket[] = [];
  const clients: mysql.Connection[] = [];

  const signIn = async (localAddress: string) => {
    const c = await mysql.createConnection({
      port: server.port,
      user: ADMIN.name,
      password: ADMIN.password,
      stream: () => net.connect({ port: server.port, host: '127.0.0.1', localAddress }),
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    const door = sqlDoor(t.running.services.users, t.running.sql, true, 'mysql');
    server = await startMysqlServer({
      engine: door.engine,
      auth: door.auth,
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      // Fewer signed-in connections than the flood: before, the flood alone filled them (1040).
      maxConnections: 10,
      maxPreAuth: MAX_PRE_AUTH,
      maxPreAuthPerAddress: PER_ADDRESS,
      // Long enough that no flooding socket expires during the spec: room is made by the policy.
      handshakeTimeoutMs: 60_000,
    });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    for (const s of sockets) s.destroy();
    await server.close(0);
    await t.dispose();
  });

  it('given hundreds of idle sockets from 127.0.0.1, then a real client from there signs in and is answered, and idle sockets from 127.0.0.2 are not dropped for them', async () => {
    const elsewhere = await idleSockets(server.port, HELD_ELSEWHERE, '127.0.0.2');
    sockets.push(...elsewhere);
    await eventually(() => server.connections() === HELD_ELSEWHERE, 'the 127.0.0.2 sockets');
    const flood = await idleSockets(server.port, FLOOD, '127.0.0.1');
    sockets.push(...flood);
    // The flood holds what the room leaves it (its share, or less once the room is full); the rest was dropped.
    await eventually(() => server.connections() === MAX_PRE_AUTH, `${MAX_PRE_AUTH} connections`);
    await eventually(() => open(flood).length === MAX_PRE_AUTH - HELD_ELSEWHERE, 'the flood dropped');
    expect(open(elsewhere)).toHaveLength(HELD_ELSEWHERE);

    const c = await signIn('127.0.0.1');
    expect((await c.query('SELECT 1 AS one'))[0]).toEqual([{ one: 1 }]);
    const other = await signIn('127.0.0.2');
    expect((await other.query('SELECT 2 AS two'))[0]).toEqual([{ two: 2 }]);
    // Both signed in; the 127.0.0.2 sockets still wait, untouched by 127.0.0.1's flood.
    expect(open(elsewhere)).toHaveLength(HELD_ELSEWHERE);
  }, 60_000);
});
