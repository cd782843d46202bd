/**
 * The PostgreSQL door with authentication on (the users' door, as src/main.ts starts it): passwords
 * asked in clear and checked against the users' hashes, taken only over TLS or from this machine;
 * statements run as the user, with their role.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import type { PgServer } from '../../src/pgwire';
import { selfSignedCertificate } from '../mysql/support';
import { ADMIN, login, sqlOver, startAuthApp, userWithRole } from '../auth/support';
import type { TestApp } from '../support/app';
import { failureOf, pgClient, runPsql, startPgDoor } from './support';

/** This machine's first address that is not loopback: a client there is "from elsewhere". */
const nonLoopbackAddress = () => {
  const address = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i?.family === 'IPv4' && !i.internal)?.address;
  if (!address) throw new Error('this spec needs a non-loopback IPv4 interface (none found)');
  return address;
};

describe('the PostgreSQL door with authentication on', () => {
  let t: TestApp;
  let admin: string;
  let analyst: { name: string; password: string; cookie: string };
  let certificate: { cert: string; key: string; dir: string };
  let server: PgServer;
  const servers: PgServer[] = [];
  const clients: pg.Client[] = [];

  const serve = async (o: { host?: string; tls?: boolean } = {}) => {
    const s = await startPgDoor(t, {
      authOn: true,
      server: {
        host: o.host ?? '127.0.0.1',
        tls: o.tls === false ? undefined : { cert: certificate.cert, key: certificate.key },
      },
    });
    servers.push(s);
    return s;
  };
  const connect = (s: PgServer, options: pg.ClientConfig) => pgClient(s.port, options, clients);

  beforeAll(async () => {
    t = await startAuthApp('sqlite');
    admin = await login(t, ADMIN.name, ADMIN.password);
    analyst = await userWithRole(t, admin, 'the_analyst', 'analyst');
    certificate = await selfSignedCertificate();
    server = await serve();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    for (const s of servers) await s.close(0);
    await t.dispose();
    fs.rmSync(certificate.dir, { recursive: true, force: true });
  });

  describe('given the right password', () => {
    it('runs statements as that user, with their role: an analyst reads but cannot create a skill', async () => {
      const c = await connect(server, { user: analyst.name, password: analyst.password });
      expect((await c.query('SELECT current_user AS who, 6 * 7 AS n')).rows).toEqual([
        { who: 'the_analyst', n: 42 },
      ]);
      const statement = "CREATE SKILL mindsdb.by_analyst USING type = 'custom', params = {}";
      const overHttp = await sqlOver(t, analyst.cookie, statement);
      expect(overHttp).toMatchObject({ type: 'error', error_code: 1227 });
      expect(await failureOf(c.query(statement))).toMatchObject({
        code: '42501',
        message: overHttp.error_message,
        detail: `engine error 1227 in: ${statement}`,
      });
    });

    it("records the user's writes in the log as theirs, through postgres", async () => {
      const c = await connect(server, { user: ADMIN.name, password: ADMIN.password });
      await c.query('CREATE PROJECT by_pg_admin');
      const users = (await t.http.get('/api/users').set('Cookie', admin).expect(200)).body as {
        id: number;
        name: string;
      }[];
      const adminId = users.find((u) => u.name === ADMIN.name)!.id;
      const events = await sqlOver(
        t,
        admin,
        "SELECT TYPE, ACTOR, INTERFACE FROM information_schema.EVENTS WHERE STREAM = 'project-by_pg_admin'",
      );
      expect(events.data).toEqual([['ProjectCreated', `user:${adminId}`, 'postgres']]);
    });

    it('refuses the next statement of a user deleted meanwhile', async () => {
      const u = await userWithRole(t, admin, 'short_lived', 'editor');
      const c = await connect(server, { user: u.name, password: u.password });
      expect((await c.query('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
      await t.http.delete('/api/users/short_lived').set('Cookie', admin).expect(204);
      expect(await failureOf(c.query('SELECT 1 AS n'))).toMatchObject({
        code: '28000',
        message: "Access denied for user 'short_lived': the user no longer exists",
      });
    });
  });

  describe('given a wrong password or none', () => {
    it('refuses the login with 28P01 naming the user, as PostgreSQL does', async () => {
      expect(await failureOf(connect(server, { user: analyst.name, password: 'wrong' }))).toMatchObject({
        severity: 'FATAL',
        code: '28P01',
        message: 'password authentication failed for user "the_analyst"',
      });
      expect(await failureOf(connect(server, { user: 'nobody', password: analyst.password }))).toMatchObject({
        code: '28P01',
        message: 'password authentication failed for user "nobody"',
      });
    });

    it('makes psql fail with the same message, and ask for a password it was not given', async () => {
      const wrong = await runPsql(server.port, 'SELECT 1', {
        user: analyst.name,
        env: { PGPASSWORD: 'wrong' },
      });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('FATAL:  password authentication failed for user "the_analyst"');
      const none = await runPsql(server.port, 'SELECT 1', { user: analyst.name, args: ['-w'] });
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('fe_sendauth: no password supplied');
      const right = await runPsql(server.port, 'SELECT current_user', {
        user: analyst.name,
        env: { PGPASSWORD: analyst.password },
      });
      expect(right).toEqual({ code: 0, stdout: 'the_analyst\n', stderr: '' });
    });
  });

  describe('given TLS configured', () => {
    it('switches a client asking for SSL to TLS, with the configured certificate', async () => {
      const c = await connect(server, {
        user: analyst.name,
        password: analyst.password,
        ssl: { rejectUnauthorized: false },
      });
      const socket = (c as unknown as { connection: { stream: { encrypted?: boolean } } }).connection.stream;
      expect(socket.encrypted).toBe(true);
      expect((await c.query('SELECT 2 AS n')).rows).toEqual([{ n: 2 }]);

      const rootCert = path.join(certificate.dir, 'cert.pem');
      const verified = await runPsql(server.port, '\\conninfo', {
        user: analyst.name,
        env: { PGSSLMODE: 'verify-full', PGSSLROOTCERT: rootCert, PGPASSWORD: analyst.password },
      });
      expect(verified.code).toBe(0);
      expect(verified.stdout).toContain('You are connected to database "mindsdb" as user "the_analyst"');
      expect(verified.stdout).toMatch(/SSL connection \(protocol: TLSv1\.[23]/);
    });

    it('answers a plain client on this machine without TLS: the password is taken from loopback', async () => {
      const plain = await runPsql(server.port, '\\conninfo', {
        user: analyst.name,
        env: { PGSSLMODE: 'disable', PGPASSWORD: analyst.password },
      });
      expect(plain.code).toBe(0);
      expect(plain.stdout).not.toContain('SSL connection');
    });
  });

  describe('given a client that is not on this machine', () => {
    it('takes its password only over TLS, saying how to connect', async () => {
      const host = nonLoopbackAddress();
      const withTls = await serve({ host });
      const options = { host, user: analyst.name, password: analyst.password };
      expect(await failureOf(connect(withTls, options))).toMatchObject({
        severity: 'FATAL',
        code: '28000',
        message: 'the password is only taken over TLS: connect with sslmode=require (or prefer)',
      });
      const secure = await connect(withTls, { ...options, ssl: { rejectUnauthorized: false } });
      expect((await secure.query('SELECT current_user AS who')).rows).toEqual([{ who: 'the_analyst' }]);

      const withoutTls = await serve({ host, tls: false });
      expect(await failureOf(connect(withoutTls, options))).toMatchObject({
        code: '28000',
        message:
          'the password is only taken over TLS or from this machine: the server has no PG_TLS_CERT/PG_TLS_KEY configured',
      });
    });
  });
});
