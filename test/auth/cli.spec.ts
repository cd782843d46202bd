import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import supertest from 'supertest';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { runCli } from '../support/bundled';

/** `npm run user -- …` (src/cli/user.ts, compiled: test/support/bundled.ts), with the password on stdin. */
const userCli = (dataDir: string, args: string[], stdin = '') =>
  runCli('src/cli/user.ts', args, { DATA_DIR: dataDir, LOG_LEVEL: 'silent', USER_PASSWORD: '' }, stdin);

describe('npm run user', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-cli-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('adds an admin (password from stdin) and so turns authentication on', async () => {
    const added = await userCli(dataDir, ['add', 'operator', '--role', 'admin'], 'operator-password\n');
    expect(added).toMatchObject({ code: 0, stdout: 'user operator added (admin)\n' });
    expect((await userCli(dataDir, ['add', 'short'], 'x\n')).stderr).toContain('at least 8 characters');
    expect((await userCli(dataDir, ['list'])).stdout).toBe('operator\tadmin\n');

    const running = await createApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
      logger: pino({ level: 'silent' }),
    });
    try {
      const http = supertest(running.app);
      expect((await http.get('/api/status').expect(200)).body.auth.http_auth_enabled).toBe(true);
      await http.get('/api/projects').expect(401);
      await http.post('/api/login').send({ username: 'operator', password: 'operator-password' }).expect(200);
      const events = await running.ctx.log.readPage({ after: 0n, limit: 100, stream: 'users' });
      expect(events[0]?.meta).toMatchObject({ actor: 'system:cli', via: 'system' });
    } finally {
      await running.close();
    }
  }, 60_000);
});
