import pino from 'pino';
import supertest from 'supertest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { startAuthApp, ADMIN, login } from './support';
import type { TestApp } from '../support/app';

describe('behind a proxy (TRUST_PROXY): limits per user and per address, Secure cookies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startAuthApp('sqlite', { TRUST_PROXY: '1', LOGIN_RATE_LIMIT: '2' });
  });
  afterAll(() => t?.dispose());

  const attempt = (from: string, username: string) =>
    t.http.post('/api/login').set('X-Forwarded-For', from).send({ username, password: 'not-it' });

  it('limits failed sign-ins of one user name from any number of addresses', async () => {
    expect((await attempt('10.0.0.1', 'victim')).status).toBe(401);
    expect((await attempt('10.0.0.2', 'victim')).status).toBe(401);
    expect((await attempt('10.0.0.3', 'victim')).status).toBe(429);
  });

  it('limits failed sign-ins from one address whatever the user name', async () => {
    expect((await attempt('10.0.1.9', 'a')).status).toBe(401);
    expect((await attempt('10.0.1.9', 'b')).status).toBe(401);
    expect((await attempt('10.0.1.9', 'c')).status).toBe(429);
  });

  it('marks the cookie Secure when the request came over HTTPS (X-Forwarded-Proto)', async () => {
    const res = await t.http
      .post('/api/login')
      .set('X-Forwarded-For', '10.0.2.1')
      .set('X-Forwarded-Proto', 'https')
      .send({ username: ADMIN.name, password: ADMIN.password })
      .expect(200);
    expect(([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]).toMatch(/; Secure$/);
  });
});

describe('sessions expire', () => {
  it('refuses a session past SESSION_TTL_SECONDS', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-ttl-'));
    let offsetMs = 0;
    const running = await createApp(
      loadConfig({
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        AUTH_USERNAME: ADMIN.name,
        AUTH_PASSWORD: ADMIN.password,
        SESSION_TTL_SECONDS: '3600',
      }),
      { logger: pino({ level: 'silent' }), clock: () => new Date(Date.now() + offsetMs) },
    );
    try {
      const http = supertest(running.app);
      const cookie = await login({ http } as TestApp, ADMIN.name, ADMIN.password);
      offsetMs = 59 * 60_000;
      await http.get('/api/projects').set('Cookie', cookie).expect(200);
      offsetMs = 61 * 60_000;
      await http.get('/api/projects').set('Cookie', cookie).expect(401);
    } finally {
      await running.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
