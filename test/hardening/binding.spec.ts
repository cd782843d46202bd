/**
 * The Docker image binds 0.0.0.0 and there is no authentication yet: the real service refuses to
 * start on an address other hosts can reach unless the operator opts in (ALLOW_UNAUTHENTICATED=1).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, unsafeBinding } from '../../src/config';
import { bundled } from '../support/bundled';

const ROOT = path.resolve(__dirname, '../..');

describe('binding without authentication', () => {
  it.each(['127.0.0.1', 'localhost', '::1', '127.0.0.5'])('starts on the loopback address %s', (host) => {
    expect(unsafeBinding(loadConfig({ HOST: host }))).toBeNull();
  });

  it.each(['0.0.0.0', '::', '10.0.0.7', 'api.example.com'])('refuses %s without the opt-in', (host) => {
    expect(unsafeBinding(loadConfig({ HOST: host }))).toMatch(
      new RegExp(`^Refusing to listen on ${host.replace(/\./g, '\\.')}: authentication is off`),
    );
    expect(unsafeBinding(loadConfig({ HOST: host, ALLOW_UNAUTHENTICATED: '1' }))).toBeNull();
  });

  it('the real service exits at once with the reason, having written nothing', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-binding-'));
    try {
      const run = spawnSync(process.execPath, [await bundled('src/main.ts')], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATA_DIR: dataDir,
          HOST: '0.0.0.0',
          PORT: '0',
          EVENT_STORE_URL: '',
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(
        /Refusing to listen on 0\.0\.0\.0: authentication is off.*ALLOW_UNAUTHENTICATED=1/,
      );
      expect(fs.readdirSync(dataDir)).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
