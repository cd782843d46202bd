/**
 * Issue 37, defect 5: with authentication on, Debian's `mysql` (MariaDB 10.11, Connector/C 3.3)
 * could not sign in with its default options. Its `ssl` option is on by default, and with the
 * server offering no TLS it went on over plain TCP yet sent caching_sha2_password's password in
 * clear (it takes the option for the connection), which the door refused ("needs a secure
 * channel"): the password had crossed the wire all the same. The door now offers TLS by default,
 * with a certificate of its own when none is given, so the stock clients of both families sign in
 * inside TLS; clients without TLS (mysql2) still get the server's RSA key.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import pino from 'pino';
import { startMysqlServer, type MysqlServer, type MysqlServerOptions } from '../../src/mysql';
import { certificateHosts } from '../../src/mysql/server';
import { selfSignedCertificateIn } from '../../src/shared/selfSignedCertificate';
import { sqlDoor, WireLoginLimiter } from '../../src/users/sqlDoors';
import { ADMIN, startAuthApp } from '../auth/support';
import type { TestApp } from '../support/app';
import { freePort, startService } from '../support/service';
import { lines, type CliResult } from './support';

const LIMIT = 3;

/** The stock `mysql` with nothing but where to go, who, the password and the statement (no --ssl, no --skip-ssl). */
const stockCli = (port: number, password: string, sql: string, extra: string[] = []): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      'mysql',
      ['-h', '127.0.0.1', '-P', String(port), '-u', ADMIN.name, `-p${password}`, ...extra, '-e', sql],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });

describe('the stock MySQL clients signing in with authentication on', () => {
  let t: TestApp;
  const doors: MysqlServer[] = [];
  const clients: mysql.Connection[] = [];

  /** The door as src/main.ts starts it: the service's users, one wire login limiter, TLS as given (by default its own). */
  const door = async (o: Partial<MysqlServerOptions> = {}) => {
    const limiter = new WireLoginLimiter({ limit: LIMIT, windowMs: 60_000 });
    const d = sqlDoor(t.running.services.users, t.running.sql, true, 'mysql', limiter);
    const server = await startMysqlServer({
      engine: d.engine,
      auth: d.auth,
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      ...o,
    });
    doors.push(server);
    return { server, limiter };
  };

  beforeAll(async () => {
    t = await startAuthApp('sqlite');
  });
  afterAll(async () => {
    for (const c of clients) c.destroy();
    for (const d of doors) await d.close(0);
    await t.dispose();
  });

  describe('given the door with its default TLS', () => {
    it('signs the Debian mysql CLI in with its default options, inside TLS, and answers its query', async () => {
      const { server } = await door();

      const out = await stockCli(
        server.port,
        ADMIN.password,
        'SELECT CURRENT_USER() AS who, 41 + 1 AS answer; \\s',
      );

      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
      const [header, row] = lines(out.stdout);
      expect([header, row]).toEqual([
        ['who', 'answer'],
        [`${ADMIN.name}@%`, '42'],
      ]);
      expect(out.stdout).toMatch(/SSL:\s+Cipher in use is TLS/);
    });

    it('refuses a wrong password, counts it in the wire login limiter, and past the limit refuses the right one', async () => {
      const { server, limiter } = await door();

      for (let i = 0; i < LIMIT; i++) {
        const wrong = await stockCli(server.port, 'not-the-password', 'SELECT 1');
        expect(wrong.code).toBe(1);
        expect(wrong.stderr).toContain(
          `ERROR 1045 (28000): Access denied for user '${ADMIN.name}'@'127.0.0.1' (using password: YES)`,
        );
      }

      expect(limiter.blocked(ADMIN.name, '127.0.0.1')).toBe(true);
      const blocked = await stockCli(server.port, ADMIN.password, 'SELECT 1');
      expect(blocked.code).toBe(1);
      expect(blocked.stderr).toContain('too many failed sign-ins from this address for user');
    });

    it("signs mysql2 in with its default options (no TLS: the password goes RSA-encrypted with the server's key)", async () => {
      const { server } = await door();

      const c = await mysql.createConnection({
        host: '127.0.0.1',
        port: server.port,
        user: ADMIN.name,
        password: ADMIN.password,
      });
      clients.push(c);

      const [rows] = await c.query<mysql.RowDataPacket[]>('SELECT CURRENT_USER() AS who');
      expect(rows).toEqual([{ who: `${ADMIN.name}@%` }]);
    });
  });

  describe('given the certificate src/main.ts keeps in DATA_DIR/tls', () => {
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-door-tls-'));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('makes it once, keeps it across starts, and a client verifying it against the file signs in', async () => {
      const made = selfSignedCertificateIn(dir, certificateHosts('127.0.0.1'));
      const again = selfSignedCertificateIn(dir, certificateHosts('127.0.0.1'));
      expect(again).toEqual(made);
      expect(fs.statSync(path.join(dir, 'server-key.pem')).mode & 0o777).toBe(0o600);
      const { server } = await door({ tls: made });

      const out = await stockCli(server.port, ADMIN.password, 'SELECT 1 AS verified', [
        `--ssl-ca=${path.join(dir, 'server-cert.pem')}`,
        '--ssl-verify-server-cert',
      ]);

      expect(out).toMatchObject({ code: 0, stderr: '' });
      expect(lines(out.stdout)).toEqual([['verified'], ['1']]);
    });
  });

  describe('given the real service (src/main.ts) with authentication on', () => {
    it('signs the stock CLI in with its default options, and verifying the certificate kept in DATA_DIR/tls', async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-stock-cli-'));
      const mysqlPort = await freePort();
      const service = await startService({
        DATA_DIR: dataDir,
        MYSQL_PORT: String(mysqlPort),
        AUTH_USERNAME: ADMIN.name,
        AUTH_PASSWORD: ADMIN.password,
        LOG_LEVEL: 'info',
      });
      try {
        while (!/MySQL protocol listening/.test(service.output()))
          await new Promise((r) => setTimeout(r, 100));

        const plain = await stockCli(mysqlPort, ADMIN.password, 'SELECT CURRENT_USER() AS who');
        const verified = await stockCli(mysqlPort, ADMIN.password, 'SELECT 1 AS verified', [
          `--ssl-ca=${path.join(dataDir, 'tls', 'server-cert.pem')}`,
          '--ssl-verify-server-cert',
        ]);

        expect(plain).toMatchObject({ code: 0, stderr: '' });
        expect(lines(plain.stdout)).toEqual([['who'], [`${ADMIN.name}@%`]]);
        expect(verified).toMatchObject({ code: 0, stderr: '' });
        expect(lines(verified.stdout)).toEqual([['verified'], ['1']]);
      } finally {
        service.child.kill('SIGTERM');
        await service.exited;
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }, 120_000);
  });

  describe('given a door told to offer no TLS', () => {
    it("refuses the CLI's password, which its Connector/C sent in clear (why TLS is on by default)", async () => {
      const { server, limiter } = await door({ tls: false });

      const out = await stockCli(server.port, ADMIN.password, 'SELECT 1');

      expect(out.code).toBe(1);
      expect(out.stderr).toContain('caching_sha2_password needs a secure channel for this login');
      expect(out.stderr).toContain("MariaDB's mysql: --skip-ssl");
      // Not a wrong password: nothing counted against the user.
      expect(limiter.blocked(ADMIN.name, '127.0.0.1')).toBe(false);
    });
  });
});
