/**
 * Issue 57, defect 8, over both wire doors as src/main.ts builds them (one WireLoginLimiter):
 * - one user's failures from an address lock that user out from there, not the address's other
 *   users (before, 10 wrong passwords for one user locked everyone behind the address out of both
 *   doors, saying "password authentication failed"); the refusal says why and when to retry;
 * - an access token is taken as the password (its user's name as the user name), with its role
 *   and project scope: an analyst's token reads and cannot write, a project-scoped one makes no DDL;
 * - the PostgreSQL door's pg_settings names no path of the server's disk.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import pino from 'pino';
import { startMysqlServer, type MysqlServer } from '../../src/mysql';
import { startPgServer, type PgServer } from '../../src/pgwire';
import { sqlDoor, WireLoginLimiter } from '../../src/users/sqlDoors';
import { ADMIN, login, projectToken, startAuthApp, userWithRole } from '../auth/support';
import type { TestApp } from '../support/app';

const LIMIT = 3;

describe('the wire doors under one noisy address', () => {
  let t: TestApp;
  let my: MysqlServer;
  let pgs: PgServer;
  const users: Record<string, { name: string; password: string; cookie: string }> = {};

  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    const admin = await login(t, ADMIN.name, ADMIN.password);
    for (const [name, role] of [
      ['ann', 'analyst'],
      ['bob', 'analyst'],
      ['cat', 'analyst'],
      ['dan', 'editor'],
    ] as const)
      users[name] = await userWithRole(t, admin, name, role);
    const limiter = new WireLoginLimiter({ limit: LIMIT, windowMs: 60_000 });
    const silent = pino({ level: 'silent' });
    const door = (kind: 'mysql' | 'postgres') =>
      sqlDoor(t.running.services.users, t.running.sql, true, kind, limiter);
    const myDoor = door('mysql');
    my = await startMysqlServer({
      engine: myDoor.engine,
      auth: myDoor.auth,
      host: '127.0.0.1',
      port: 0,
      logger: silent,
    });
    const pgDoor = door('postgres');
    pgs = await startPgServer({
      engine: pgDoor.engine,
      auth: pgDoor.auth,
      host: '127.0.0.1',
      port: 0,
      logger: silent,
    });
  }, 60_000);
  afterAll(async () => {
    await my.close(0);
    await pgs.close(0);
    await t.dispose();
  });

  /** A MySQL login's outcome: the connection's answer to SELECT 1, or the refusal's message. */
  const overMysql = async (user: string, password: string, sql = 'SELECT 1 AS one') => {
    let c: mysql.Connection | undefined;
    try {
      c = await mysql.createConnection({ host: '127.0.0.1', port: my.port, user, password });
      return { rows: (await c.query(sql))[0] as unknown };
    } catch (e) {
      return { error: (e as Error).message, code: (e as { errno?: number }).errno };
    } finally {
      c?.destroy();
    }
  };
  const overPg = async (user: string, password: string, sql = 'SELECT 1 AS one') => {
    const c = new pg.Client({ host: '127.0.0.1', port: pgs.port, user, password, database: 'mindsdb' });
    c.on('error', () => undefined);
    try {
      await c.connect();
      return { rows: (await c.query(sql)).rows as unknown };
    } catch (e) {
      return { error: (e as Error).message };
    } finally {
      await c.end().catch(() => undefined);
    }
  };

  it.each([
    ['MySQL', overMysql, 'ann'],
    ['PostgreSQL', overPg, 'cat'],
  ] as const)(
    'over %s, given 3 wrong passwords for one user from 127.0.0.1, then that user is refused saying why and until when, and another user of that address signs in',
    async (_door, over, locked) => {
      for (let i = 0; i < LIMIT; i++) {
        const wrong = await over(locked, 'not-the-password');
        expect(wrong.error).toMatch(/password|denied/i);
      }
      const refused = await over(locked, users[locked]!.password);
      expect(refused.error).toMatch(
        new RegExp(
          `too many failed sign-ins from this address for user ${locked}, retry after \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ`,
        ),
      );
      expect(refused.error).not.toMatch(/password authentication failed/);
      expect(await over('bob', users.bob!.password)).toEqual({ rows: [{ one: 1 }] });
    },
    60_000,
  );

  it.each([
    ['MySQL', overMysql],
    ['PostgreSQL', overPg],
  ] as const)(
    "over %s, an analyst's access token as the password reads, and its writes are refused by its role",
    async (_door, over) => {
      const token = await projectToken(t, users.bob!.cookie, null);
      expect(await over('bob', token)).toEqual({ rows: [{ one: 1 }] });
      const write = await over('bob', token, 'CREATE PROJECT from_a_token');
      expect(write.error).toMatch(/analyst/i);
      // Another name than its user's with bob's token: no login.
      expect((await over('nobody', token)).error).toMatch(/password|denied/i);
    },
    60_000,
  );

  it.each([
    ['MySQL', overMysql],
    ['PostgreSQL', overPg],
  ] as const)(
    "over %s, an editor's token scoped to a project signs in with that scope: no DDL, though the editor's password may",
    async (_door, over) => {
      const token = await projectToken(t, users.dan!.cookie, 'mindsdb');
      expect(await over('dan', token)).toEqual({ rows: [{ one: 1 }] });
      expect((await over('dan', token, 'CREATE PROJECT scoped_ddl')).error).toMatch(/project|scope|token/i);
      // After the token's logins, the password still signs in (and none of them counted as a failure).
      for (let i = 0; i < LIMIT; i++) expect(await over('dan', token)).toEqual({ rows: [{ one: 1 }] });
      expect(await over('dan', users.dan!.password)).toEqual({ rows: [{ one: 1 }] });
      expect(await over('dan', token)).toEqual({ rows: [{ one: 1 }] });
    },
    60_000,
  );

  it("answers pg_settings without any absolute path of the server's disk", async () => {
    const answer = await overPg('bob', users.bob!.password, 'SELECT name, setting FROM pg_settings');
    const rows = answer.rows as { name: string; setting: string }[];
    expect(rows.length).toBeGreaterThan(10);
    const text = JSON.stringify(rows);
    expect(text).not.toContain(t.running.ctx.config.dataDir);
    for (const r of rows) expect(r.setting ?? '').not.toMatch(/(^|[[,'"\s])(\/|~)[^\s]/);
    expect(rows.map((r) => r.name)).not.toContain('data_directory');
  }, 60_000);
});
