/**
 * The real service serves the MySQL protocol on MYSQL_PORT beside HTTP, with the same engine: what
 * one door writes the other reads; SIGTERM closes both and the process exits. Its log says each door
 * listens once.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { bundled } from '../support/bundled';

const ROOT = path.resolve(__dirname, '../..');

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

describe('the MySQL door of the real service', () => {
  it('answers SQL tools on MYSQL_PORT with the same engine as HTTP, and closes on SIGTERM', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-mysql-door-'));
    const [httpPort, mysqlPort] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, [await bundled('src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(httpPort),
        MYSQL_PORT: String(mysqlPort),
        PG_PORT: '0',
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
      while (!/MySQL protocol listening/.test(output)) {
        if (Date.now() > until || child.exitCode !== null)
          throw new Error(`the service did not start:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const created = await fetch(`http://127.0.0.1:${httpPort}/api/projects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'door' }),
      });
      expect(created.status).toBe(201);
      const connection = await mysql.createConnection({ host: '127.0.0.1', port: mysqlPort, user: 'any' });
      try {
        const [rows] = await connection.query('SHOW DATABASES');
        expect((rows as { Database: string }[]).map((r) => r.Database)).toEqual(
          expect.arrayContaining(['information_schema', 'files', 'mindsdb', 'door']),
        );
        await connection.query("CREATE SKILL door.s USING type = 'custom', params = {}");
      } finally {
        await connection.end();
      }
      const skills = await (await fetch(`http://127.0.0.1:${httpPort}/api/projects/door/skills`)).json();
      expect(skills).toEqual([expect.objectContaining({ name: 's', type: 'custom' })]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // Each door says it listens once (main.ts used to say it again for MySQL).
      expect(output.match(/MySQL protocol listening/g)).toHaveLength(1);
      expect(output.match(/mindledger listening/g)).toHaveLength(1);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
