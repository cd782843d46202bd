/**
 * The MySQL door of a server started with authentication off asks, on every statement, whether it
 * is still off (answered from the users' state of the read model's current version, without a
 * wait when that is loaded): once an admin exists, the very next statement of an open connection
 * is refused, and so is a new connection's.
 */
import mysql from 'mysql2/promise';
import { startTestApp, type TestApp } from '../support/app';
import { startMysqlDoor } from './support';
import type { MysqlServer } from '../../src/mysql';

describe('a MySQL door started with authentication off', () => {
  let t: TestApp;
  let door: MysqlServer;
  const clients: mysql.Connection[] = [];

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    door = await startMysqlDoor(t);
  });
  afterAll(async () => {
    for (const c of clients) c.destroy();
    await door.close(0);
    await t.stop();
  });

  it('refuses the next statement once an admin exists', async () => {
    const c = await mysql.createConnection({ host: '127.0.0.1', port: door.port, user: 'anyone' });
    clients.push(c);
    // Statements answered while authentication is off (the state is loaded, then asked without a wait).
    for (let i = 0; i < 3; i++) expect((await c.query('SELECT 41 + 1 AS n'))[0]).toEqual([{ n: 42 }]);
    expect(t.running.services.users.enabledNow()).toBe(false);

    await t.running.services.users.bootstrap('first_admin', 'first-admin-password');

    // Asked first by the door: the state loaded before the admin is never taken for the current one.
    await expect(c.query('SELECT 41 + 1 AS n')).rejects.toMatchObject({
      errno: 1045,
      message: 'Authentication was turned on after this MySQL server started: reconnect after a restart',
    });
    expect(t.running.services.users.enabledNow()).toBe(true);
    await expect(
      mysql.createConnection({ host: '127.0.0.1', port: door.port, user: 'anyone' }).then(async (late) => {
        clients.push(late);
        return late.query('SELECT 1');
      }),
    ).rejects.toMatchObject({ errno: 1045 });
  });
});
