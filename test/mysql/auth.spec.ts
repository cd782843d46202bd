import fs from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import pino from 'pino';
import { startMysqlServer, type Authenticator, type MysqlServer } from '../../src/mysql';
import { startTestApp, type TestApp } from '../support/app';
import { appEngine, lines, runCli, selfSignedCertificate } from './support';

/** mysql2's caching_sha2_password plugin, with its options (the package types do not list the factory). */
type Sha2PluginFactory = (options: {
  onServerPublicKey?: (key: Buffer) => void;
  overrideIsSecure?: boolean;
}) => NonNullable<mysql.ConnectionOptions['authPlugins']>[string];
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sha2Plugin = (require('mysql2') as { authPlugins: { caching_sha2_password: Sha2PluginFactory } })
  .authPlugins.caching_sha2_password;

const PASSWORDS: Record<string, string> = { analyst: 's3cret', other: 'pässword', third: 'x' };

/** Credentials kept in clear: every plugin can check a scramble. */
const clearCredentials: Authenticator = {
  verify: (user, password) => PASSWORDS[user] === password,
  passwordOf: (user) => PASSWORDS[user],
};

/** Credentials only checkable in clear (as hashed ones would be): caching_sha2's full authentication. */
const verifyOnly: Authenticator = { verify: (user, password) => PASSWORDS[user] === password };

describe('MySQL authentication and TLS', () => {
  let app: TestApp;
  let tls: { cert: string; key: string; dir: string };
  const servers: MysqlServer[] = [];
  const clients: mysql.Connection[] = [];

  const serve = async (o: Partial<Parameters<typeof startMysqlServer>[0]>) => {
    const server = await startMysqlServer({
      engine: appEngine(app),
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      ...o,
    });
    servers.push(server);
    return server;
  };
  const connect = async (server: MysqlServer, o: mysql.ConnectionOptions) => {
    const c = await mysql.createConnection({ host: '127.0.0.1', port: server.port, ...o });
    clients.push(c);
    return c;
  };
  const whoAmI = async (c: mysql.Connection) =>
    (await c.query<mysql.RowDataPacket[]>('SELECT CURRENT_USER() AS who'))[0][0]!.who as string;

  beforeAll(async () => {
    app = await startTestApp('sqlite');
    tls = await selfSignedCertificate();
  });
  afterAll(async () => {
    for (const c of clients) c.destroy();
    for (const s of servers) await s.close(0);
    await app.dispose();
    fs.rmSync(tls.dir, { recursive: true, force: true });
  });

  describe('given authentication off', () => {
    it('lets any user in with any password, through either plugin', async () => {
      const native = await serve({});
      const sha2 = await serve({ defaultAuthPlugin: 'caching_sha2_password' });
      expect(await whoAmI(await connect(native, { user: 'anyone', password: 'whatever' }))).toBe('anyone@%');
      expect(await whoAmI(await connect(sha2, { user: 'someone', password: 'else' }))).toBe('someone@%');
      expect(await whoAmI(await connect(sha2, { user: 'empty' }))).toBe('empty@%');
      for (const auth of ['mysql_native_password', 'caching_sha2_password']) {
        const cli = await runCli(native.port, 'SELECT CURRENT_USER()', [
          `--default-auth=${auth}`,
          '-pwhatever',
        ]);
        expect(cli).toMatchObject({ code: 0, stdout: 'CURRENT_USER()\nanalyst@%\n' });
      }
    });
  });

  describe('given credentials kept in clear', () => {
    let server: MysqlServer;
    beforeAll(async () => {
      server = await serve({ auth: clearCredentials });
    });

    it('checks mysql_native_password scrambles', async () => {
      expect(await whoAmI(await connect(server, { user: 'analyst', password: 's3cret' }))).toBe('analyst@%');
      await expect(connect(server, { user: 'analyst', password: 'wrong' })).rejects.toMatchObject({
        errno: 1045,
        sqlState: '28000',
        message: "Access denied for user 'analyst'@'127.0.0.1' (using password: YES)",
      });
      await expect(connect(server, { user: 'nobody', password: 's3cret' })).rejects.toMatchObject({
        errno: 1045,
      });
      expect(await runCli(server.port, 'SELECT 1 AS one', ['-ps3cret'])).toMatchObject({
        code: 0,
        stdout: 'one\n1\n',
      });
      const denied = await runCli(server.port, 'SELECT 1', ['-pwrong']);
      expect(denied.code).toBe(1);
      expect(denied.stderr).toContain("ERROR 1045 (28000): Access denied for user 'analyst'@'127.0.0.1'");
    });

    it("checks caching_sha2_password's fast path without the password crossing the wire", async () => {
      const sha2 = await serve({ auth: clearCredentials, defaultAuthPlugin: 'caching_sha2_password' });
      const keys: Buffer[] = [];
      const options = {
        authPlugins: { caching_sha2_password: sha2Plugin({ onServerPublicKey: (k) => keys.push(k) }) },
      };
      expect(await whoAmI(await connect(sha2, { user: 'other', password: 'pässword', ...options }))).toBe(
        'other@%',
      );
      await expect(connect(sha2, { user: 'other', password: 'nope', ...options })).rejects.toMatchObject({
        errno: 1045,
      });
      expect(keys).toEqual([]);
      const cli = await runCli(server.port, 'SELECT CURRENT_USER()', [
        '--default-auth=caching_sha2_password',
        '-ps3cret',
      ]);
      expect(cli).toMatchObject({ code: 0, stdout: 'CURRENT_USER()\nanalyst@%\n' });
    });
  });

  describe('given credentials checkable only in clear, and TLS', () => {
    let server: MysqlServer;
    beforeAll(async () => {
      server = await serve({ auth: verifyOnly, tls: { cert: tls.cert, key: tls.key } });
    });

    it('takes the password over TLS on a first login, then the fast path on plain TCP', async () => {
      const keys: Buffer[] = [];
      const options = {
        authPlugins: { caching_sha2_password: sha2Plugin({ onServerPublicKey: (k) => keys.push(k) }) },
      };
      const secure = await connect(server, {
        user: 'analyst',
        password: 's3cret',
        ssl: { rejectUnauthorized: false },
        ...options,
      });
      expect(await whoAmI(secure)).toBe('analyst@%');
      const plain = await connect(server, { user: 'analyst', password: 's3cret', ...options });
      expect(await whoAmI(plain)).toBe('analyst@%');
      expect(keys).toEqual([]);
    });

    it("encrypts the password with the server's RSA key over plain TCP when the client asks for it", async () => {
      const keys: Buffer[] = [];
      const options = {
        authPlugins: { caching_sha2_password: sha2Plugin({ onServerPublicKey: (k) => keys.push(k) }) },
      };
      expect(await whoAmI(await connect(server, { user: 'other', password: 'pässword', ...options }))).toBe(
        'other@%',
      );
      expect(keys.map((k) => k.toString().split('\n')[0])).toEqual(['-----BEGIN PUBLIC KEY-----']);
      await expect(connect(server, { user: 'third', password: 'wrong', ...options })).rejects.toMatchObject({
        errno: 1045,
        message: "Access denied for user 'third'@'127.0.0.1' (using password: YES)",
      });
    });

    it('refuses a password sent in clear over plain TCP, saying how to connect', async () => {
      const cleartext = { authPlugins: { caching_sha2_password: sha2Plugin({ overrideIsSecure: true }) } };
      // A server of its own: one that has seen this user log in (over TLS) takes the fast path instead.
      const fresh = await serve({ auth: verifyOnly, tls: { cert: tls.cert, key: tls.key } });
      await expect(connect(fresh, { user: 'third', password: 'x', ...cleartext })).rejects.toMatchObject({
        errno: 1045,
        message: expect.stringContaining('connect with TLS, or let the client ask for the server'),
      });
    });

    it('logs the mysql CLI in over TLS (--ssl) and over plain TCP (it asks for the RSA key itself)', async () => {
      const overTls = await runCli(server.port, 'status', ['--ssl', '-ps3cret']);
      expect(overTls.code).toBe(0);
      expect(overTls.stdout).toMatch(/SSL:\s+Cipher in use is TLS/);
      // A fresh server has no cached digest: the CLI's first login needs the full authentication.
      const fresh = await serve({ auth: verifyOnly, tls: { cert: tls.cert, key: tls.key } });
      const wrong = await runCli(fresh.port, 'SELECT 1', ['--skip-ssl', '-pwrong']);
      expect(wrong.stderr).toContain("ERROR 1045 (28000): Access denied for user 'analyst'@'127.0.0.1'");
      const ok = await runCli(fresh.port, 'SELECT CURRENT_USER() AS who', ['--skip-ssl', '-ps3cret']);
      expect(ok).toMatchObject({ code: 0 });
      expect(lines(ok.stdout)).toEqual([['who'], ['analyst@%']]);
    });

    it('serves queries over TLS like over plain TCP', async () => {
      const secure = await connect(server, {
        user: 'third',
        password: 'x',
        // Verified against the certificate: the connection is TLS end to end.
        ssl: { ca: fs.readFileSync(path.join(tls.dir, 'cert.pem'), 'utf8') },
        multipleStatements: true,
      });
      const [results] = await secure.query<mysql.RowDataPacket[][]>(
        "SELECT repeat('x', 100000) AS big; SELECT * FROM range(50000) t(i) ORDER BY i DESC LIMIT 1",
      );
      expect(results[0]![0]!.big).toHaveLength(100000);
      expect(results[1]).toEqual([{ i: 49999 }]);
      const [rows] = await secure.execute<mysql.RowDataPacket[]>('SELECT ? AS v', ['über']);
      expect(rows).toEqual([{ v: 'über' }]);
    });
  });
});
