/** The console's static route, on its own: caching, the missing-build problem, nothing shadowed. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import supertest from 'supertest';
import { consoleRoutes } from '../../src/console/routes';
import { notFoundHandler } from '../../src/http/problem';

const appServing = (dir: string) => {
  const app = express();
  app.get('/api/util/ping', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use(consoleRoutes(dir));
  app.use(notFoundHandler);
  return supertest(app);
};

describe('the console route', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-dist-'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(
      path.join(dir, 'index.html'),
      '<script type="module" src="/assets/index-abc123.js"></script>',
    );
    fs.writeFileSync(path.join(dir, 'assets/index-abc123.js'), 'console.log(1)');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('answers index.html at / without caching', async () => {
    const res = await appServing(dir).get('/').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.text).toContain('/assets/index-abc123.js');
  });

  it('serves hashed assets with a year of immutable caching', async () => {
    const res = await appServing(dir).get('/assets/index-abc123.js').expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-type']).toMatch(/javascript/);
  });

  it('leaves unknown assets and API paths to the routes after it', async () => {
    const http = appServing(dir);
    const missing = await http.get('/assets/nope.js').expect(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    await http.get('/api/util/ping').expect(200, { status: 'ok' });
    await http.get('/api/unknown').expect(404);
  });

  it('answers a 503 problem saying to run npm run build when the console was not built', async () => {
    const res = await appServing(path.join(dir, 'not-built')).get('/').expect(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual({
      title: 'Console not built',
      detail: expect.stringContaining('npm run build'),
      status: 503,
    });
  });
});
