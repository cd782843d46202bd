/**
 * Unauthenticated sockets cannot lock the PostgreSQL door (issue 35): connections that have not
 * signed in have a room of their own (bounded in all and per address, the oldest dropped past
 * either), apart from the room of signed-in ones, so a real client signs in during a flood.
 */
import net from 'node:net';
import type pg from 'pg';
import type { PgServer } from '../../src/pgwire';
import { ADMIN, startAuthApp } from '../auth/support';
import type { TestApp } from '../support/app';
import { idleSockets, openSockets as open } from '../support/sockets';
import { eventually, pgClient, startPgDoor } from './support';

const FLOOD = 400;
const PER_ADDRESS = 32;
const MAX_PRE_AUTH = 48;
const HELD_ELSEWHERE = 20;

/** A node-postgres connection option making its socket from `localAddress`. */
const from =
  (localAddress: string): pg.ClientConfig['stream'] =>
  () => {
    const socket = new net.Socket();
    const connect = socket.connect.bind(socket);
    Object.assign(socket, {
      connect: (port: number, host: string) => connect({ port, host, localAddress }),
    });
    return socket;
  };

describe('the PostgreSQL door under a flood of unauthenticated sockets', () => {
  let t: TestApp;
  let server: PgServer;
  const sockets: net.Socket[] = [];
  const clients: pg.Client[] = [];

  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    server = await startPgDoor(t, {
      authOn: true,
      server: {
        // Fewer signed-in connections than the flood: before, the flood alone filled them.
        maxConnections: 10,
        maxPreAuth: MAX_PRE_AUTH,
        maxPreAuthPerAddress: PER_ADDRESS,
        // Long enough that no flooding socket expires during the spec: room is made by the policy.
        handshakeTimeoutMs: 60_000,
      },
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
    await eventually(() => server.connections() === HELD_ELSEWHERE);
    const flood = await idleSockets(server.port, FLOOD, '127.0.0.1');
    sockets.push(...flood);
    // The flood holds what the room leaves it (its share, or less once the room is full); the rest was dropped.
    await eventually(() => server.connections() === MAX_PRE_AUTH);
    await eventually(() => open(flood).length === MAX_PRE_AUTH - HELD_ELSEWHERE);
    expect(open(elsewhere)).toHaveLength(HELD_ELSEWHERE);

    const c = await pgClient(server.port, { user: ADMIN.name, password: ADMIN.password }, clients);
    expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    const other = await pgClient(
      server.port,
      { user: ADMIN.name, password: ADMIN.password, stream: from('127.0.0.2') },
      clients,
    );
    expect((await other.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    // Both signed in; the 127.0.0.2 sockets still wait, untouched by 127.0.0.1's flood.
    expect(open(elsewhere)).toHaveLength(HELD_ELSEWHERE);
  }, 60_000);
});
